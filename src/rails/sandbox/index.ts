// The sandbox rail (RAIL=sandbox, the default): the pretend bank of docs/api-reference.md — payments made by
// the sandbox helpers and the hosted page's form, transfers and refunds settled after SANDBOX_SETTLEMENT.
import type { Rail } from '../rail.ts';
import { sandboxPayer, sandboxRefunds } from './pay-in.ts';
import { SandboxPayOut } from './pay-out.ts';

export function sandboxRail(): Rail {
  return { name: 'sandbox', payOut: new SandboxPayOut(), refunds: sandboxRefunds, payIn: null, account: null, sandboxPayer };
}
