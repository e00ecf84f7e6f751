// The operator's invitation of a merchant's console user (docs/api-reference.md#invite-a-console-user), under
// /admin/v1 with the other operator routes: the merchant's owner is invited here (or with `mps user invite`),
// and then invites its cashiers from the console itself.
import type { CapabilityRoutes } from '../context.ts';
import { errorResponses, OPERATOR_ERRORS } from '../kernel/schemas.ts';
import { BusinessCodeParams } from '../merchants/schemas.ts';
import { CreatedInvitationSchema, InviteUserBody } from './schemas.ts';
import * as users from './service.ts';
import { toCreatedInvitationView } from './views.ts';

export const userAdminRoutes: CapabilityRoutes = async (app, { config, db, clock }) => {
  app.post('/merchants/:business_code/users', {
    // The answer's link is a bearer: whoever holds it sets the password.
    config: { auth: 'admin', showsSecret: true },
    schema: {
      tags: ['operator'],
      security: [{ adminToken: [] }],
      summary: 'Invite a person to a merchant\'s console (its owner, usually): a single-use link valid 72 hours, shown once',
      params: BusinessCodeParams,
      body: InviteUserBody,
      response: { 201: CreatedInvitationSchema, ...errorResponses(...OPERATOR_ERRORS, 400, 404, 409, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const invitation = await users.inviteUser(db, {
      businessCode: request.params.business_code, email: request.body.email, role: request.body.role ?? 'owner', invitedBy: null,
    }, clock.now());
    return reply.code(201).send(toCreatedInvitationView(config, invitation));
  });
};
