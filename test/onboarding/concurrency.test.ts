// Races of the final step on PostgreSQL (PGlite runs one transaction at a time, so it proves nothing here):
// concurrent submits with a fee of 0, concurrent activation payments, and a payment racing a cancel each
// end with at most one merchant, decided by the guarded transition and the unique constraints.
import { sandboxPayer } from '../../src/rails/sandbox/pay-in.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as onboarding from '../../src/onboarding/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeOnPostgres } from '../helpers/databases.ts';
import { FlowBrowser, newIntent, tokenOf, VALID_FORM, type Partner } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

describeOnPostgres('onboarding races on %s', (kind) => {
  let t: TestApp;
  let free: TestApp;
  let partner: Partner;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    // a second instance with its own pool and a fee of 0, on the same database
    free = await startTestApp({ kind, database: t.database, separatePool: true, clock: t.clock, env: { ONBOARDING_ACTIVATION_FEE: '0' } });
    partner = await t.createPartner();
  });
  afterAll(async () => {
    await free?.close();
    await t?.close();
  });

  const merchantsOfPartner = async () => {
    const { rows } = await t.db.query<{ total: number }>('select count(*)::int8 as total from merchants where partner_id = $1::bigint', [partner.partnerId]);
    return Number(rows[0]!.total);
  };
  const completedEvents = async (code: string) =>
    (await eventsOfOwner(t.db, { kind: 'partner', partnerId: partner.partnerId })).filter((e) => e.data.code === code && e.type === 'onboarding_intent.completed');

  it('fee 0: concurrent submits of the form create exactly one merchant', async () => {
    for (let round = 0; round < 5; round++) {
      const before = await merchantsOfPartner();
      const intent = await newIntent(t, partner);
      const browser = new FlowBrowser(t, tokenOf(intent));
      await browser.get();
      const other = new FlowBrowser(free, tokenOf(intent));
      other.cookie = browser.cookie;
      other.csrf = browser.csrf;
      const viaFirst = new FlowBrowser(free, tokenOf(intent));
      viaFirst.cookie = browser.cookie;
      viaFirst.csrf = browser.csrf;
      const responses = await Promise.all([viaFirst.post('', VALID_FORM), other.post('', VALID_FORM), viaFirst.post('', VALID_FORM)]);
      for (const response of responses) {
        expect(response.status).toBe(303);
        expect(response.location).toBe(`/onboarding/${tokenOf(intent)}/done`);
      }
      expect(await merchantsOfPartner()).toBe(before + 1);
      expect(await completedEvents(intent.code)).toHaveLength(1);
      // The winning post bound its browser with a new cookie; the one the three shared gets no key.
      const winner = [viaFirst, other].filter((b) => b.cookie !== browser.cookie);
      expect(winner).toHaveLength(1);
      const dones = await Promise.all([browser.get('/done'), winner[0]!.get('/done')]);
      expect(dones.map((d) => d.status)).toEqual([410, 200]);
    }
  });

  it('concurrent activation payments: one is accepted, the other refused; one merchant, one fee', async () => {
    for (let round = 0; round < 5; round++) {
      const before = await merchantsOfPartner();
      const intent = await newIntent(t, partner);
      await new FlowBrowser(t, tokenOf(intent)).register();
      const stored = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
      const { rows: [balanceBefore] } = await t.db.query<{ a: number }>('select available_centavos as a from balances where business_code = 1000');
      const results = await Promise.allSettled([
        onboarding.simulateActivationPayment(t.context, sandboxPayer, stored, t.clock.now()),
        onboarding.simulateActivationPayment(free.context, sandboxPayer, stored, t.clock.now()),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toMatchObject({ code: 'QR_NOT_PAYABLE' });
      expect(await merchantsOfPartner()).toBe(before + 1);
      const { rows: [balanceAfter] } = await t.db.query<{ a: number }>('select available_centavos as a from balances where business_code = 1000');
      expect(Number(balanceAfter!.a) - Number(balanceBefore!.a)).toBe(1000);
      expect(await completedEvents(intent.code)).toHaveLength(1);
    }
  });

  it('a payment racing a cancel: either completed with the fee, or cancelled with no money moved', async () => {
    for (let round = 0; round < 5; round++) {
      const intent = await newIntent(t, partner);
      const browser = new FlowBrowser(t, tokenOf(intent));
      await browser.register();
      await browser.get();
      const stored = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
      const { rows: [balanceBefore] } = await t.db.query<{ a: number }>('select available_centavos as a from balances where business_code = 1000');
      const [payment, cancel] = await Promise.allSettled([
        onboarding.simulateActivationPayment(free.context, sandboxPayer, stored, t.clock.now()),
        onboarding.cancelByToken(t.db, t.config, tokenOf(intent), t.clock.now()),
      ]);
      // never a deadlock or another database error: only the loser's clean refusal
      expect(cancel.status).toBe('fulfilled');
      if (payment.status === 'rejected') expect(payment.reason).toMatchObject({ code: 'QR_NOT_PAYABLE' });
      const after = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
      const { rows: [balanceAfter] } = await t.db.query<{ a: number }>('select available_centavos as a from balances where business_code = 1000');
      const moved = Number(balanceAfter!.a) - Number(balanceBefore!.a);
      if (after.status === 'completed') {
        expect(moved).toBe(1000);
        expect(after.business_code).not.toBeNull();
      } else {
        expect(after.status).toBe('cancelled');
        expect(moved).toBe(0);
        expect(after.business_code).toBeNull();
      }
    }
  });
});
