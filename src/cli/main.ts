// `mps`: the operator CLI. The same operations as /admin/v1, run directly on the database through the
// same services, plus `migrate` and the ledger check. Prints JSON on stdout; errors are one line on stderr.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import type { Static, TSchema } from '@sinclair/typebox';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/database.ts';
import { backupDataDir, BackupError, restoreDataDir } from '../db/backup.ts';
import { checkDatabaseMode, claimDatabaseMode, DatabaseModeMismatch } from '../db/database-mode.ts';
import { DataDirInUseError } from '../db/lock-file.ts';
import { migrate, pendingMigrations } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { reconcileContextOf, reconcileOnDemand } from '../bank/reconciliation.ts';
import { bankContextOf, sweepRailDay } from '../bank/service.ts';
import { toReconciliationView } from '../bank/views.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import { fieldErrorsFromAjv, validatorCompiler } from '../kernel/validation.ts';
import * as ledger from '../ledger/service.ts';
import { StatementQuery } from '../ledger/schemas.ts';
import { dayRange, exportEntries, statementOf } from '../ledger/statements.ts';
import { csvStringifier, inertRecord } from '../ledger/csv.ts';
import { revenueOf } from '../ledger/revenue.ts';
import { REVENUE_CSV_COLUMNS, toEntryCsvRow, toLedgerReportView, toRevenueCsvRows, toRevenueView, toStatementView } from '../ledger/views.ts';
import * as schemas from '../merchants/schemas.ts';
import * as merchants from '../merchants/service.ts';
import { parseFixedFee, parseQrPrice, type PricePlan } from '../merchants/pricing.ts';
import { toApiKeyListing, toCreatedPartnerView, toMerchantView, toPartnerView } from '../merchants/views.ts';
import { putPayoutScheduleBodySchema } from '../payouts/schemas.ts';
import * as payouts from '../payouts/service.ts';
import { toPayoutScheduleResource } from '../payouts/views.ts';
import { ResolveRefundBody } from '../refunds/schemas.ts';
import * as refunds from '../refunds/service.ts';
import { bankNameLookup, configuredBanks } from '../transfers/banks.ts';
import { resolveBatch } from '../transfers/batches.ts';
import { BatchIdParams, ResolveBatchBody } from '../transfers/schemas.ts';
import { toBatchResource } from '../transfers/views.ts';
import { toRefundResource } from '../refunds/views.ts';
import * as userSchemas from '../users/schemas.ts';
import * as users from '../users/service.ts';
import { toCreatedInvitationView } from '../users/views.ts';
import { systemClock } from '../time.ts';
import { createAppContext } from '../composition.ts';

const USAGE = `mps — operator CLI of the Merchant Payments Service

Usage: npm run mps -- <command> [options]     (or: npx mps <command>)

  migrate [--dry-run]                       apply pending database migrations (each in its own transaction);
                                            --dry-run lists them, and any applied by a newer version, and
                                            changes nothing (docs/upgrading.md)
  partner create --name NAME                create a partner and print its master key (shown once)
  partner list                              list partners
  partner key create PARTNER_ID             create another master key for a partner
  partner key list PARTNER_ID               list a partner's master keys (prefixes only)
  merchant create --name NAME [--city CITY] [--mcc MCC] [--ach on|off] [--partner PARTNER_ID]
                                            create a merchant and print its first API key (shown once)
  merchant list                             list merchants
  merchant show BUSINESS_CODE               show one merchant
  merchant update BUSINESS_CODE [--ach on|off] [--status active|suspended]
  merchant pricing BUSINESS_CODE [--qr PERCENT%+FIXED] [--transfer FIXED]
                                            show a merchant's price plan, or change it: --qr 1.5%+0.30,
                                            --transfer 0.50 (as FEE_QR and FEE_TRANSFER; docs/fees.md);
                                            applies to payments and transfers from then on
  merchant payout-schedule BUSINESS_CODE [--interval manual|daily|weekly [--weekday 1-7]
                           [--bank CODE --account NUMBER --holder NAME] [--minimum AMOUNT] [--keep AMOUNT]]
                                            show a merchant's payout schedule and its latest run, or
                                            replace it (docs/payouts.md): minimum and keep left out take
                                            their defaults (10.00, 0), the account left out is kept
  key create BUSINESS_CODE [--kind merchant|terminal]
                                            create another key for a merchant (terminal: a POS or kiosk
                                            key for QRs and their payments only); shown once
  key list BUSINESS_CODE                    list a merchant's API keys (prefixes only)
  user invite BUSINESS_CODE EMAIL [--role owner|cashier]
                                            invite a person to the merchant's console (docs/console.md),
                                            owner by default: prints the single-use invitation link, valid
                                            72 hours (shown once; send it to them yourself)
  user link EMAIL                           a new password link for a console user who has an account (a
                                            forgotten password, an owner locked out): prints it, single use,
                                            72 hours; using it ends the user's other sessions (docs/console.md)
  key revoke KEY_PREFIX                     revoke a merchant key or master key
  ledger check                              prove the books close (docs/journal.md); exit 3 on a mismatch
  rails sweep --date YYYY-MM-DD             read the bank's paid QRs of that business day and record what is
                                            missing (a bank's rail only; docs/rails.md); exit 4 when the bank
                                            refused or did not answer, or a payment could not be recorded
  rails reconcile --date YYYY-MM-DD         compare that business day's bank payments and transfers with what
                                            the bank lists and debited (a bank's rail only; docs/rails.md);
                                            exit 3 when there are breaks, 4 when the bank refused or did not answer
  rails batch resolve BATCH_ID --to COMPLETED|FAILED
                                            settle a batch whose upload's answer never came, after checking
                                            with the bank: its transfers still IN_TRANSIT (docs/rails.md)
  refund resolve REFUND_ID --to COMPLETED|FAILED [--note TEXT]
                                            record what became of a PENDING refund the rail cannot pay
                                            back by itself (docs/rails.md); FAILED returns its funds
  statement BUSINESS_CODE --from YYYY-MM-DD --to YYYY-MM-DD [--csv]
                                            a merchant's daily statement (JSON), or with --csv its journal
                                            entries as CSV, streamed (days in SERVICE_TIMEZONE, at most 366)
  revenue --from YYYY-MM-DD --to YYYY-MM-DD [--csv]
                                            what the merchants' fees earned, by day and by merchant, and the
                                            activation fees apart (docs/fees.md); --csv: one row per day and
                                            merchant
  backup --to FILE                          embedded database only: write a copy of DATA_DIR to FILE (a new
                                            file; gzip tarball); exit 1 while the service has DATA_DIR open
  restore --from FILE                       embedded database only: restore such a copy into DATA_DIR, which
                                            must be new or empty; exit 1, nothing written, while DATA_DIR is
                                            open or when FILE is not such a backup
                                            (docs/backups.md; with DATABASE_URL use pg_dump or pg_basebackup)

The database is the service's: DATABASE_URL (PostgreSQL) or the embedded one in DATA_DIR. An embedded
database can be open in one process only: stop the service before using the CLI on it. MODE must be the
database's: a database belongs to the mode it was first started in, and the CLI refuses the other (exit 2).`;

class UsageError extends Error {}


/** What a command printed: JSON, or a stream written to stdout as it comes (the CSV export). */
type Result = { output: unknown; exitCode: number } | { stream: Readable; exitCode: number };
/** A command whose arguments have been checked, ready to run on the database. */
type Command = (context: AppContext) => Promise<Result>;
/** A command on the embedded database's files (backup, restore): it takes DATA_DIR's lock itself, no database opened. */
interface FileCommand { files: () => Promise<{ output: unknown; exitCode: number }> }

const ok = (output: unknown): Result => ({ output, exitCode: 0 });

/**
 * Reads the command line into a Command, checking every argument before any database is opened: a typo
 * answers at once, without creating, migrating or locking an embedded database.
 */
function parseCommand(argv: string[], config: Config): Command | FileCommand {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      city: { type: 'string' },
      mcc: { type: 'string' },
      ach: { type: 'string' },
      partner: { type: 'string' },
      status: { type: 'string' },
      kind: { type: 'string' },
      role: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      csv: { type: 'boolean' },
      date: { type: 'string' },
      note: { type: 'string' },
      qr: { type: 'string' },
      transfer: { type: 'string' },
      interval: { type: 'string' },
      weekday: { type: 'string' },
      bank: { type: 'string' },
      account: { type: 'string' },
      holder: { type: 'string' },
      minimum: { type: 'string' },
      keep: { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
    strict: true,
  });
  const command = positionals.join(' ');
  const [noun, verb, third, fourth] = positionals;
  if (values['dry-run'] && command !== 'migrate') throw new UsageError('--dry-run goes with migrate only');

  if (noun === 'backup' || noun === 'restore') {
    if (verb !== undefined) throw new UsageError(`${noun} takes no argument but ${noun === 'backup' ? '--to FILE' : '--from FILE'}`);
    const file = noun === 'backup' ? values.to : values.from;
    if (!file) throw new UsageError(noun === 'backup' ? 'backup needs --to FILE' : 'restore needs --from FILE');
    const target = config.database;
    if (target.kind !== 'pglite') {
      // Not a mistyped command: no hint to read --help.
      throw new BackupError(target.kind === 'postgres'
        ? `${noun} is for the embedded database (DATA_DIR); on PostgreSQL (DATABASE_URL) use pg_dump/pg_restore or pg_basebackup with WAL archiving (docs/backups.md)`
        : `${noun} is for the embedded database in DATA_DIR; memory:// keeps nothing to back up`);
    }
    return noun === 'backup'
      ? { files: async () => ({ output: await backupDataDir(target.dataDir, file), exitCode: 0 }) }
      : { files: async () => ({ output: await restoreDataDir(file, target.dataDir), exitCode: 0 }) };
  }

  if (noun === 'statement') {
    if (third !== undefined) throw new UsageError('statement takes one BUSINESS_CODE');
    const businessCode = wholeNumber(verb, 'BUSINESS_CODE');
    const query = validate(StatementQuery, { from: values.from, to: values.to });
    return async ({ config, db, clock }) => {
      await merchants.getMerchant(db, businessCode); // unknown: "merchant not found"
      const range = dayRange(query.from, query.to, config.serviceTimeZone, clock.now());
      if (values.csv) {
        const bankName = bankNameLookup(configuredBanks(config));
        return { stream: exportEntries(db, businessCode, range, (line, zone) => toEntryCsvRow(line, zone, bankName)), exitCode: 0 };
      }
      return ok(toStatementView(await statementOf(db, businessCode, range)));
    };
  }
  if (noun === 'revenue') {
    if (verb !== undefined) throw new UsageError('revenue takes no argument but --from and --to');
    const query = validate(StatementQuery, { from: values.from, to: values.to });
    return async ({ config, db, clock }) => {
      const range = dayRange(query.from, query.to, config.serviceTimeZone, clock.now());
      const report = await revenueOf(db, range, await merchants.platformBusinessCode(db));
      const names = await merchants.merchantNames(db, [...new Set(report.lines.map((line) => line.businessCode))]);
      if (!values.csv) return ok(toRevenueView(report, names));
      const csv = csvStringifier(REVENUE_CSV_COLUMNS);
      const inert = inertRecord(REVENUE_CSV_COLUMNS, new Set(['amount']));
      for (const row of toRevenueCsvRows(report, names)) csv.write(inert(row));
      csv.end();
      return { stream: csv, exitCode: 0 };
    };
  }
  switch (`${noun} ${verb ?? ''}`.trim()) {
    case 'migrate':
      if (values['dry-run']) return async ({ db }) => ok(await pendingMigrations(db));
      return async ({ db }) => ok({ applied: await migrate(db) });
    case 'partner create': {
      const body = validate(schemas.CreatePartnerBody, { name: values.name });
      return async ({ config, db, clock }) => {
        const created = await merchants.createPartner(db, body.name, config.mode, clock.now());
        return ok(toCreatedPartnerView(created));
      };
    }
    case 'partner list':
      return async ({ db }) => ok({ data: (await merchants.listPartners(db)).map(toPartnerView) });
    case 'partner key': {
      const partnerId = wholeNumber(fourth, 'PARTNER_ID');
      if (third === 'create') {
        return async ({ config, db, clock }) => {
          const key = await merchants.createPartnerMasterKey(db, partnerId, config.mode, clock.now());
          return ok({ master_key: key.masterKey, key_prefix: key.keyPrefix });
        };
      }
      if (third === 'list') return async ({ db }) => ok({ data: (await merchants.listPartnerApiKeys(db, partnerId)).map(toApiKeyListing) });
      throw new UsageError(`unknown command: ${command}`);
    }
    case 'merchant create': {
      const body = validate(schemas.CreateMerchantBody, {
        name: values.name,
        city: values.city,
        mcc: values.mcc,
        ach_enabled: values.ach === undefined ? undefined : onOff(values.ach, '--ach'),
        partner_id: values.partner === undefined ? undefined : wholeNumber(values.partner, '--partner'),
      });
      return async ({ config, db, clock }) => {
        const created = await merchants.createMerchant(db, {
          name: body.name, city: body.city, mcc: body.mcc, achEnabled: body.ach_enabled, partnerId: body.partner_id, plan: config.defaultPricePlan,
        }, config.mode, clock.now());
        return ok({ ...toMerchantView(created.merchant), api_key: created.apiKey, key_prefix: created.keyPrefix });
      };
    }
    case 'merchant list':
      return async ({ db }) => ok({ data: (await merchants.listMerchants(db)).map(toMerchantView) });
    case 'merchant show': {
      const businessCode = wholeNumber(third, 'BUSINESS_CODE');
      return async ({ db }) => ok(toMerchantView(await merchants.getMerchant(db, businessCode)));
    }
    case 'merchant update': {
      const businessCode = wholeNumber(third, 'BUSINESS_CODE');
      const body = validate(schemas.UpdateMerchantBody, {
        ach_enabled: values.ach === undefined ? undefined : onOff(values.ach, '--ach'),
        status: values.status,
      });
      return async ({ db, clock }) => {
        const merchant = await merchants.updateMerchant(db, businessCode, { achEnabled: body.ach_enabled, status: body.status }, clock.now());
        return ok(toMerchantView(merchant));
      };
    }
    case 'merchant pricing': {
      const businessCode = wholeNumber(third, 'BUSINESS_CODE');
      if (fourth !== undefined) throw new UsageError('merchant pricing takes one BUSINESS_CODE');
      const plan = planOptions(values.qr, values.transfer);
      if (Object.keys(plan).length === 0) return async ({ db }) => ok(toMerchantView(await merchants.getMerchant(db, businessCode)));
      return async ({ db, clock }) => {
        const merchant = await merchants.updateMerchant(db, businessCode, { plan }, clock.now());
        return ok(toMerchantView(merchant));
      };
    }
    case 'merchant payout-schedule': {
      const businessCode = wholeNumber(third, 'BUSINESS_CODE');
      if (fourth !== undefined) throw new UsageError('merchant payout-schedule takes one BUSINESS_CODE');
      const { interval, weekday, bank, account, holder, minimum, keep } = values;
      const changes = [interval, weekday, bank, account, holder, minimum, keep].some((value) => value !== undefined);
      if (!changes) return async ({ db }) => ok(toPayoutScheduleResource(await payouts.getPayoutSchedule(db, businessCode)));
      // A change replaces the schedule, as the API's PUT does: its interval is always said.
      if (interval === undefined) throw new UsageError('--interval manual|daily|weekly is needed to change the schedule');
      const destinationGiven = bank !== undefined || account !== undefined || holder !== undefined;
      const body = validate(putPayoutScheduleBodySchema(configuredBanks(config)), {
        interval,
        weekday: weekday === undefined ? undefined : wholeNumber(weekday, '--weekday'),
        destination: destinationGiven ? withoutUndefined({
          type: 'bank_account',
          bank_code: bank === undefined ? undefined : wholeNumber(bank, '--bank'),
          account_number: account,
          account_titular: holder,
        }) : undefined,
        minimum,
        keep,
      });
      return async ({ db, clock }) => ok(toPayoutScheduleResource(await payouts.setPayoutSchedule({ db, config }, businessCode, body, clock.now())));
    }
    case 'key create': {
      const businessCode = wholeNumber(third, 'BUSINESS_CODE');
      const body = validate(schemas.CreateMerchantKeyBody, { kind: values.kind });
      return async ({ config, db, clock }) => {
        const key = await merchants.createMerchantApiKey(db, businessCode, config.mode, clock.now(), body.kind ?? 'merchant');
        return ok({ api_key: key.apiKey, key_prefix: key.keyPrefix, kind: key.kind });
      };
    }
    case 'key list': {
      const businessCode = wholeNumber(third, 'BUSINESS_CODE');
      return async ({ db }) => ok({ data: (await merchants.listMerchantApiKeys(db, businessCode)).map(toApiKeyListing) });
    }
    case 'key revoke': {
      if (!third) throw new UsageError('key revoke needs KEY_PREFIX');
      return async ({ db, clock }) => {
        const key = await merchants.revokeApiKey(db, third, clock.now());
        return ok({ key_prefix: key.key_prefix, revoked_at: key.revoked_at?.toISOString() });
      };
    }
    case 'user invite': {
      const businessCode = wholeNumber(third, 'BUSINESS_CODE');
      if (positionals.length !== 4) throw new UsageError('user invite takes BUSINESS_CODE and EMAIL');
      const body = validate(userSchemas.InviteUserBody, { email: fourth, role: values.role });
      return async ({ config, db, clock }) => {
        const invitation = await users.inviteUser(db, { businessCode, email: body.email, role: body.role ?? 'owner', invitedBy: null }, clock.now());
        return ok(toCreatedInvitationView(config, invitation));
      };
    }
    case 'user link': {
      if (positionals.length !== 3) throw new UsageError('user link takes EMAIL');
      const body = validate(userSchemas.InviteUserBody, { email: third });
      return async ({ config, db, clock }) => {
        const link = await users.issuePasswordLink(db, { email: body.email }, clock.now());
        if (!link) throw notFound('console user');
        return ok(toCreatedInvitationView(config, link));
      };
    }
    case 'rails sweep': {
      if (third !== undefined) throw new UsageError('rails sweep takes no arguments but --date');
      const day = values.date;
      if (!day || !/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isFinite(Date.parse(`${day}T00:00:00Z`)) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
        throw new UsageError('--date must be a real date YYYY-MM-DD');
      }
      return async (context) => {
        const bank = bankContextOf(context);
        if (!bank) throw new UsageError('the configured rail has no bank pay-in to sweep (RAIL=sandbox)');
        // A payment that could not be recorded is one line on stderr; the others are recorded, and the day
        // stays unswept (exit 4) so the command, or the daily sweep, reads it again.
        const outcome = await sweepRailDay(bank, day, (error) => process.stderr.write(`mps: ${error.message}\n`));
        return { output: outcome, exitCode: outcome.outcome === 'swept' ? 0 : 4 };
      };
    }
    case 'rails reconcile': {
      if (third !== undefined) throw new UsageError('rails reconcile takes no arguments but --date');
      const day = realDate(values.date);
      return async (context) => {
        const reconcile = reconcileContextOf(context);
        if (!reconcile) throw new UsageError('the configured rail has no bank to reconcile with (RAIL=sandbox)');
        const outcome = await reconcileOnDemand(reconcile, day);
        if (outcome.outcome !== 'reconciled') {
          // The JSON on stdout is for scripts; the line on stderr is for the operator reading a cron mail.
          process.stderr.write(outcome.outcome === 'refused'
            ? `mps: the bank refused to list ${day}: ${outcome.message}; nothing was compared, run it again later\n`
            : `mps: the bank did not answer for ${day} (${outcome.problem}); nothing was compared, run it again later\n`);
          return { output: outcome, exitCode: 4 };
        }
        const view = toReconciliationView(outcome.reconciliation);
        return { output: view, exitCode: view.status === 'balanced' ? 0 : 3 };
      };
    }
    case 'rails batch': {
      if (third !== 'resolve' || !fourth || positionals.length > 4) throw new UsageError('rails batch resolve takes one BATCH_ID');
      if (!new RegExp(BatchIdParams.properties.batchId.pattern!).test(fourth)) throw new UsageError('BATCH_ID is the batch id the bank knows, like mps-b-12');
      const body = validate(ResolveBatchBody, { to: values.to });
      return async ({ db, clock }) => ok(toBatchResource(await resolveBatch(db, fourth, body.to, clock.now())));
    }
    case 'refund resolve': {
      if (!third || fourth !== undefined) throw new UsageError('refund resolve takes one REFUND_ID');
      const body = validate(ResolveRefundBody, { to: values.to, note: values.note });
      return async ({ db, clock }) => {
        const refund = await refunds.resolveRefund(db, third, { to: body.to, note: body.note ?? null }, clock.now());
        return ok(toRefundResource(refund));
      };
    }
    case 'ledger check':
      return async ({ db }) => {
        const view = toLedgerReportView(await ledger.checkLedger(db));
        return { output: view, exitCode: view.ok ? 0 : 3 };
      };
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  }
}

/** Checks CLI input with the very schema the admin API uses, so both refuse the same things. */
function validate<T extends TSchema>(schema: T, input: Record<string, unknown>): Static<T> {
  const value = withoutUndefined(input);
  const check = validatorCompiler({ schema, method: 'POST', url: 'cli', httpPart: 'body' }) as unknown as
    ((data: unknown) => boolean) & { errors?: import('ajv').ErrorObject[] | null };
  if (!check(value)) {
    const problems = fieldErrorsFromAjv(check.errors ?? []).map((e) => `${optionOf(e.field)} ${e.message}`);
    throw new UsageError(problems.join('; '));
  }
  return value as Static<T>;
}

/** The plan fields of --qr and --transfer, written as FEE_QR and FEE_TRANSFER are; every wrong one named. */
function planOptions(qr: string | undefined, transfer: string | undefined): Partial<PricePlan> {
  const plan: Partial<PricePlan> = {};
  const problems: string[] = [];
  if (qr !== undefined) {
    const price = parseQrPrice(qr);
    if (price) Object.assign(plan, price);
    else problems.push('--qr must be PERCENT%+FIXED such as 1.5%+0.30: a percentage from 0 to 10.00 and an amount from 0 to 100.00, each with at most two decimals');
  }
  if (transfer !== undefined) {
    const fee = parseFixedFee(transfer);
    if (fee !== null) plan.transferFixed = fee;
    else problems.push('--transfer must be an amount from 0 to 100.00 with at most two decimals, such as 0.50');
  }
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return plan;
}

/** The fields whose option is not simply --FIELD: a payout schedule's destination. */
const OPTION_OF_FIELD: Record<string, string> = {
  email: 'EMAIL',
  destination: '--bank, --account and --holder',
  'destination.bank_code': '--bank',
  'destination.account_number': '--account',
  'destination.account_titular': '--holder',
};

/** The option a field of a request came from, to name it in an error. */
function optionOf(field: string): string {
  return OPTION_OF_FIELD[field] ?? `--${field.replace(/_enabled$|_id$/, '')}`;
}

function withoutUndefined(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

/** A --date that is a real calendar date YYYY-MM-DD (checked before any database is opened). */
function realDate(day: string | undefined): string {
  if (!day || !/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isFinite(Date.parse(`${day}T00:00:00Z`)) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
    throw new UsageError('--date must be a real date YYYY-MM-DD');
  }
  return day;
}

function wholeNumber(text: string | undefined, what: string): number {
  if (!text || !/^\d{1,15}$/.test(text)) throw new UsageError(`${what} must be a whole number`);
  return Number(text);
}

function onOff(text: string, what: string): boolean {
  if (text === 'on' || text === 'true') return true;
  if (text === 'off' || text === 'false') return false;
  throw new UsageError(`${what} must be on or off`);
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 1 : 0;
  }
  let command: Command | FileCommand;
  let config: Config;
  try {
    // The configuration first: a command's options may be checked against it (a payout account's bank).
    config = loadConfig();
    command = parseCommand(argv, config);
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`mps: configuration error: ${problem}\n`);
      return 2;
    }
    if (error instanceof UsageError || isParseArgsError(error)) {
      process.stderr.write(`mps: ${(error as Error).message} (run "npm run mps -- --help" for the commands)\n`);
      return 1;
    }
    if (error instanceof BackupError) {
      process.stderr.write(`mps: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  if ('files' in command) {
    try {
      const result = await command.files();
      process.stdout.write(`${JSON.stringify(result.output, null, 2)}\n`);
      return result.exitCode;
    } catch (error) {
      if (error instanceof DataDirInUseError || error instanceof BackupError) {
        process.stderr.write(`mps: ${error.message}\n`);
        return 1;
      }
      throw error;
    }
  }
  let db: Database;
  try {
    // An operator's command (a migration on a large table) may run as long as it needs.
    db = await openDatabase(config.database, { purpose: 'cli', maxConnections: 2, queryTimeoutMs: 0 });
  } catch (error) {
    if (error instanceof DataDirInUseError) {
      process.stderr.write(`mps: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  try {
    // A database of the other mode is left as it is, before any migration (it has no record before 026).
    await checkDatabaseMode(db, config.mode);
    // Every command but `migrate` needs the current schema; applying it first makes a fresh database usable.
    // Such a command acts in its mode, so it records it on a database that has none yet, as the service does
    // (`migrate` is the same in both modes and records nothing).
    if (argv[0] !== 'migrate') {
      await migrate(db);
      await claimDatabaseMode(db, config.mode);
    }
    const result = await command(createAppContext({ config, db, clock: systemClock }));
    await db.flushNotifications();
    if ('stream' in result) await pipeline(result.stream, process.stdout, { end: false });
    else process.stdout.write(`${JSON.stringify(result.output, null, 2)}\n`);
    return result.exitCode;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`mps: ${error.message}\n`);
      return 1;
    }
    if (error instanceof DatabaseModeMismatch) {
      process.stderr.write(`mps: configuration error: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ApiError) {
      const fields = (error.errors ?? []).map((e) => `${optionOf(e.field)} ${e.message}`);
      process.stderr.write(`mps: ${fields.length > 0 ? fields.join('; ') : error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await db.close();
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL';
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`mps: failed: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
