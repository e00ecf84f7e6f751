// The console's users as the operator API and the CLI show them (snake_case, ISO times; no password, no token hash).
import type { Config } from '../config.ts';
import { invitationUrlOf, type Invitation, type UserRow } from './service.ts';

export function toUserView(user: UserRow) {
  return {
    id: user.id,
    business_code: user.business_code,
    email: user.email,
    role: user.role,
    status: user.status,
    created_at: user.created_at.toISOString(),
  };
}

/** An invitation as the operator reads it once: the link is shown here and nowhere else. */
export function toCreatedInvitationView(config: Pick<Config, 'publicBaseUrl'>, invitation: Invitation) {
  return {
    user: toUserView(invitation.user),
    invitation_url: invitationUrlOf(config, invitation.token),
    expires_at: invitation.expiresAt.toISOString(),
  };
}
