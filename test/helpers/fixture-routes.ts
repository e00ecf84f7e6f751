// Test-only routes that exercise the real Foundation mechanisms (auth kinds, modules, idempotency, the
// ledger and the outbox) before the capabilities that use them exist. They are registered through
// buildApp's `plugins` option, so every hook, parser and error path is the production one.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../src/context.ts';
import * as events from '../../src/events/service.ts';
import type { App } from '../../src/http/app.ts';
import { callerScope, merchantOf, partnerOf } from '../../src/kernel/principal.ts';
import { ApiError } from '../../src/kernel/errors.ts';
import { sendIdempotentResult } from '../../src/idempotency/http.ts';
import { CurrencySchema, MoneyAmount, StrictObject } from '../../src/kernel/schemas.ts';
import { runIdempotent } from '../../src/idempotency/service.ts';
import * as ledger from '../../src/ledger/service.ts';
import { FullAccountNumber } from '../../src/masking.ts';
import { parseAmount, type Centavos } from '../../src/money.ts';
import type { Transaction } from '../../src/db/database.ts';
import { insertTransfers } from '../../src/transfers/store.ts';

/** A debit as a transfer makes it: the movement and the transfer row whose status the movement mirrors. */
async function debitWithTransfer(tx: Transaction, businessCode: number, amountCentavos: Centavos, reference: string | null, now: Date) {
  const movement = await ledger.debit(tx, { businessCode, amountCentavos, reference, snapshot: FIXTURE_DESTINATION, now });
  await insertTransfers(tx, [{
    businessCode, movementId: movement.id, amountCentavos, reference, bankCode: 1014,
    accountNumber: new FullAccountNumber('10000123455678'), accountTitular: 'Juan Pérez', feeCentavos: 0 as Centavos, origin: 'api', now,
  }]);
  return movement;
}


export const MovementBody = StrictObject({
  business_code: Type.Integer(),
  amount: MoneyAmount(10, 2_000_000),
  currency: Type.Optional(CurrencySchema),
  direction: Type.Optional(Type.Unsafe<'credit' | 'debit'>({ type: 'string', enum: ['credit', 'debit'] })),
  reference: Type.Optional(Type.String({ maxLength: 50 })),
  /** Holds the transaction open this long (ms) before committing, to test IDEMPOTENCY_KEY_IN_USE. */
  hold_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 5000 })),
  nested: Type.Optional(StrictObject({ note: Type.Optional(Type.String()) })),
});

/** What fixture movements show in the history (already masked, as the capabilities store them). */
export const FIXTURE_PAYER = { details: { source_bank: 'Banco Unión', account_number: '******4321', account_titular: 'Ana Pérez' } };
export const FIXTURE_DESTINATION = { destination: { type: 'bank_account' as const, bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Pérez' } };

export const fixtureRoutes: FastifyPluginAsync<AppContext> = async (instance, { db, clock }) => {
  const app = instance as unknown as App;

  app.get('/test/merchant-only', { config: { auth: 'merchant' } }, async (request) => ({ business_code: merchantOf(request.principal) }));
  app.get('/test/partner-only', { config: { auth: 'partner' } }, async (request) => ({ partner_id: partnerOf(request.principal) }));
  app.get('/test/either', { config: { auth: 'merchant_or_partner' } }, async (request) => ({ kind: request.principal?.kind }));
  app.post('/test/ach-only', { config: { auth: 'merchant', module: 'ach' } }, async () => ({ ok: true }));

  app.get('/test/crash', async () => {
    const error = new Error('relation "secret_table" does not exist: select * from secret_table where api_key = $1');
    (error as Error & { stack: string }).stack = 'at /work/main/src/secret.ts:1:1';
    throw error;
  });

  // A write in the shape of a transfer: 403 business_code mismatch after validation, then the idempotent
  // money movement and its event in one transaction.
  app.post('/test/movements', {
    config: { auth: 'merchant', idempotency: 'required' },
    schema: { body: MovementBody },
  }, async (request, reply) => {
    const businessCode = merchantOf(request.principal);
    const body = request.body as typeof MovementBody.static;
    if (body.business_code !== businessCode) throw new ApiError('BUSINESS_CODE_MISMATCH');
    const parsed = parseAmount(body.amount, { min: 10, max: 2_000_000 });
    if (!parsed.ok) throw new Error('validated amount did not parse');
    const canonical = { business_code: body.business_code, amount_centavos: parsed.centavos, direction: body.direction ?? 'credit', reference: body.reference ?? null };
    const outcome = await runIdempotent(db, { caller: callerScope(request.principal!), route: 'POST /test/movements', key: request.idempotencyKey! }, canonical, clock.now(), async (tx) => {
      const now = clock.now();
      const movement = canonical.direction === 'credit'
        ? await ledger.credit(tx, { businessCode, amountCentavos: parsed.centavos, reference: canonical.reference, snapshot: FIXTURE_PAYER, now })
        : await debitWithTransfer(tx, businessCode, parsed.centavos, canonical.reference, now);
      await events.emit(tx, { kind: 'merchant', businessCode }, canonical.direction === 'credit' ? 'simple_qr.payment_received' : 'transfer.created', { movement_id: movement.id }, now);
      if (body.hold_ms) await tx.query('select pg_sleep($1::float8 / 1000)', [body.hold_ms]);
      return { statusCode: 201, body: { movement_id: movement.id, amount_centavos: movement.amount_centavos, status: movement.status } };
    });
    return sendIdempotentResult(reply, outcome);
  });
};
