// Schemas of the operator's invitation of a merchant's console user (docs/api-reference.md#invite-a-console-user).
import { Type, type Static } from '@sinclair/typebox';
import { BusinessCode, EmailAddress, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';
import { USER_ROLES } from './service.ts';

export const InviteUserBody = StrictObject({
  email: EmailAddress({ description: 'The person\'s email: their console sign-in, one account across the service' }),
  role: Type.Optional(StringEnum(USER_ROLES, {
    default: 'owner',
    description: 'owner: the whole console, and invites cashiers; cashier: the POS terminal and today\'s QRs only',
  })),
});
export type InviteUserBody = Static<typeof InviteUserBody>;

export const ConsoleUserSchema = Type.Object({
  id: Type.Integer(),
  business_code: BusinessCode(),
  email: Type.String(),
  role: StringEnum(USER_ROLES),
  status: StringEnum(['invited', 'active', 'disabled'] as const, { description: 'invited until the invitation is accepted' }),
  created_at: Timestamp(),
});

export const CreatedInvitationSchema = Type.Object({
  user: ConsoleUserSchema,
  invitation_url: Type.String({ description: 'Single-use link to set a password and sign in; shown once (only its SHA-256 is stored)' }),
  expires_at: Timestamp('When the link stops working: 72 hours after it was made'),
});
