// The bank's memory and rules: tokens, QRs and their payments, the account's history and the payment
// batches. Nothing here speaks HTTP; the routes (bank-api.ts, control-api.ts, page.ts) call these
// methods and the callbacks module listens to the hooks. Everything lives in memory and is gone on stop.
import { randomBytes, randomUUID } from 'node:crypto';
import { daysBetween, laPaz, Numbering, QrIds } from './clock.ts';
import { encryptField, signJwt, verifyJwt } from './crypto.ts';
import { emvPayload, qrPngBase64 } from './emv.ts';
import type { Knobs } from './knobs.ts';
import {
  amountCents, asObject, type Body, CODES, currency, encrypted, invalid, MAX_ID, optionalText, Refusal,
  requiredBoolean, requiredDate, requiredInteger, requiredText, toAmount,
} from './validate.ts';

export interface BankConfig {
  userName: string;
  password: string;
  aesKey: string;
  /** The merchant's account at the bank: QRs credit it, batches debit it. */
  account: string;
  openingBalanceCents: number;
  /** Shown in the QR payload (tag 59). */
  merchantName: string;
}

export type QrStatus = 'active' | 'paid' | 'cancelled';

export interface QrRecord {
  qrId: string;
  transactionId: string;
  currency: 'BOB' | 'USD';
  amountCents: number;
  description: string;
  dueDate: string;
  singleUse: boolean;
  modifyAmount: boolean;
  branchCode: string;
  createdAt: number;
  status: QrStatus;
  payments: PaymentRecord[];
  /** The text the image encodes, and the image (base64 PNG) as generateQR answered it. */
  payload: string;
  image: string;
}

export interface PaymentRecord {
  /** The bank's number for this payment (text in PaymentQR, the same number in the account history). */
  transactionId: string;
  qrId: string;
  /** False for an injected payment to a qrId the bank never issued. */
  knownQr: boolean;
  currency: 'BOB' | 'USD';
  amountCents: number;
  senderBankCode: string;
  senderName: string;
  senderAccount: string;
  description: string;
  branchCode: string;
  paidAt: number;
}

export interface HistoryEntry {
  transactionId: number;
  at: number;
  documentNumber: number;
  transactionType: 'C' | 'D';
  /** Signed: negative for debits. */
  amountCents: number;
  description: string;
  clienteNote: string;
}

export type ItemStatus = 'PENDING' | 'ACEP' | 'RECH';

export interface BatchItem {
  batchDetailId: string;
  amountCents: number;
  /** The beneficiary's account in clear (it arrived encrypted). */
  account: string;
  accountTypeCode: 'CCAD' | 'CMOVILD';
  bankCode: string;
  beneficiaryName: string;
  beneficiaryDocId?: string;
  beneficiaryPhone?: string;
  beneficiaryEmail?: string;
  note: string;
  status: ItemStatus;
  descriptionStatus?: string;
  transactionIdDebit?: number;
  transactionIdCredit?: string;
  decidedAt?: number;
}

export interface BatchRecord {
  bankBatchId: number;
  batchId: string;
  type: 'PAYROLL' | 'PROVIDERS';
  description: string;
  detailedDebit: boolean;
  currency: 'BOB' | 'USD';
  amountCents: number;
  amlSource: string;
  amlDestination: string;
  uploadedAt: number;
  /** With detailedDebit false: the one debit's number, shared by every accepted item. */
  batchDebitId?: number;
  items: BatchItem[];
}

export interface BankHooks {
  /** A payment reached the account (the bank then notifies the merchant). */
  paid(payment: PaymentRecord): void;
  /** A batch item was accepted or rejected (the bank then notifies the client). */
  decided(batch: BatchRecord, item: BatchItem): void;
}

/** What a payer (the page) or a test (the control API) may say about a payment. */
export interface PayOptions {
  amount?: number;
  currency?: 'BOB' | 'USD';
  senderName?: string;
  senderBankCode?: string;
  senderAccount?: string;
  /** When the payment happened (ISO 8601); now by default. Lets a test fill a past day for paidQR. */
  paidAt?: string;
  /** Record it even where the bank's rules would refuse it (fixed amount, paid, cancelled, expired). */
  force?: boolean;
}

const ACCOUNT_CURRENCY = 'BOB';

export class Bank {
  readonly qrs = new Map<string, QrRecord>();
  readonly payments: PaymentRecord[] = [];
  readonly history: HistoryEntry[] = [];
  readonly batches: BatchRecord[] = [];
  balanceCents: number;
  reservedCents = 0;
  /** Live tokens by id, with their expiry; a token not here is refused even if its signature is good. */
  private readonly tokens = new Map<string, number>();
  private readonly jwtSecret = randomBytes(32);
  private readonly numbers: Numbering;
  private readonly qrIds: QrIds;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly config: BankConfig,
    private readonly knobs: Knobs,
    private readonly now: () => number,
    private readonly hooks: BankHooks,
  ) {
    this.balanceCents = config.openingBalanceCents;
    this.numbers = new Numbering(now);
    this.qrIds = new QrIds(now);
  }

  /** Forgets everything (tokens included) and cancels pending decisions; the configuration stays. */
  reset(): void {
    this.stop();
    this.qrs.clear();
    this.payments.length = 0;
    this.history.length = 0;
    this.batches.length = 0;
    this.tokens.clear();
    this.balanceCents = this.config.openingBalanceCents;
    this.reservedCents = 0;
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  // ── Tokens ────────────────────────────────────────────────────────────────────────────────────

  authenticate(raw: unknown): string {
    const body = asObject(raw);
    const userName = requiredText(body, 'userName', MAX_ID);
    const password = encrypted(body, 'password', this.config.aesKey);
    if (userName !== this.config.userName || password !== this.config.password) {
      throw new Refusal(CODES.authenticationFailed, 'Usuario o contraseña incorrectos');
    }
    const iat = Math.floor(this.now() / 1000);
    const expiresAt = this.now() + this.knobs.tokenLifetimeMs;
    const jti = randomUUID();
    this.tokens.set(jti, expiresAt);
    return signJwt({ sub: userName, jti, iat, exp: Math.ceil(expiresAt / 1000), iss: 'baneco-simulator' }, this.jwtSecret);
  }

  /** Whether an `Authorization` header carries a live token of this bank. */
  tokenIsLive(authorization: string | undefined): boolean {
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/i.exec(authorization?.trim() ?? '');
    if (!match) return false;
    const claims = verifyJwt(match[1]!, this.jwtSecret);
    if (!claims) return false;
    const expiresAt = this.tokens.get(claims.jti);
    if (expiresAt === undefined) return false;
    if (expiresAt <= this.now()) {
      this.tokens.delete(claims.jti);
      return false;
    }
    return true;
  }

  /** Every token issued so far stops working now (the "expire all tokens" knob). */
  expireTokens(): number {
    const count = this.tokens.size;
    this.tokens.clear();
    return count;
  }

  liveTokens(): number {
    const now = this.now();
    return [...this.tokens.values()].filter((expiresAt) => expiresAt > now).length;
  }

  // ── QR Simple ─────────────────────────────────────────────────────────────────────────────────

  private ownAccount(plain: string, field: string): void {
    if (plain !== this.config.account) throw new Refusal(CODES.account, `La cuenta de ${field} no existe o no pertenece al usuario`);
  }

  async generateQR(raw: unknown): Promise<{ qrId: string; qrImage: string }> {
    const body = asObject(raw);
    const transactionId = requiredText(body, 'transactionId', MAX_ID);
    const account = encrypted(body, 'accountCredit', this.config.aesKey);
    const money = currency(body, 'currency');
    const cents = amountCents(body.amount, 'amount');
    const description = optionalText(body, 'description') ?? '';
    const dueDate = requiredDate(body, 'dueDate');
    const singleUse = requiredBoolean(body, 'singleUse');
    const modifyAmount = requiredBoolean(body, 'modifyAmount');
    const branchCode = optionalText(body, 'branchCode', 5) ?? '';
    this.ownAccount(account, 'accountCredit');
    if (dueDate < laPaz(this.now()).date) throw invalid('La fecha de vencimiento (dueDate) no puede ser anterior a hoy');

    const qrId = this.qrIds.next();
    const payload = emvPayload({ qrId, currency: money, amount: toAmount(cents), dueDate, merchantName: this.config.merchantName, description });
    const image = await qrPngBase64(payload);
    this.qrs.set(qrId, {
      qrId, transactionId, currency: money, amountCents: cents, description, dueDate, singleUse, modifyAmount,
      branchCode, createdAt: this.now(), status: 'active', payments: [], payload, image,
    });
    return { qrId, qrImage: image };
  }

  private findQr(raw: unknown): QrRecord {
    if (typeof raw !== 'string' || raw.trim() === '') throw invalid('El campo qrId es obligatorio');
    const qr = this.qrs.get(raw);
    if (!qr) throw new Refusal(CODES.notFound, 'El QR no existe');
    return qr;
  }

  /**
   * Cancels an unpaid single-use QR, or a multi-use QR for future payments (its past payments stay).
   * A paid single-use QR or an already cancelled one is refused.
   */
  cancelQR(raw: unknown): void {
    const body = asObject(raw);
    const qr = this.findQr(body.qrId);
    if (qr.status === 'cancelled') throw new Refusal(CODES.wrongState, 'El QR ya se encuentra anulado');
    if (qr.status === 'paid' && qr.singleUse) throw new Refusal(CODES.wrongState, 'El QR ya fue pagado y no puede anularse');
    qr.status = 'cancelled';
  }

  /** statusQRCode 0 active, 1 paid (a multi-use QR with payments too), 9 cancelled; payments always listed. */
  statusQR(qrId: string): { code: 0 | 1 | 9; payments: PaymentRecord[] } {
    const qr = this.findQr(qrId);
    const code = qr.status === 'cancelled' ? 9 : qr.status === 'paid' ? 1 : 0;
    return { code, payments: [...qr.payments] };
  }

  /** The payments whose La Paz day is `isoDate`, whichever QR (or none) they were for. */
  paidOn(isoDate: string): PaymentRecord[] {
    return this.payments.filter((payment) => laPaz(payment.paidAt).date === isoDate);
  }

  /** A payer pays a QR (the page), or a test injects a payment (control API): may refuse as the bank would. */
  pay(qrId: string, options: PayOptions): PaymentRecord {
    const qr = this.qrs.get(qrId);
    if (qrId.trim() === '' || qrId.length > MAX_ID) throw invalid('qrId inválido');
    const paidAt = options.paidAt === undefined ? this.now() : Date.parse(options.paidAt);
    if (Number.isNaN(paidAt)) throw invalid('paidAt debe ser una fecha y hora ISO 8601');
    if (options.amount === undefined && !qr) throw invalid('Un pago a un QR desconocido necesita amount');
    const cents = options.amount === undefined ? qr!.amountCents : amountCents(options.amount, 'amount');
    const money = options.currency ?? qr?.currency ?? 'BOB';
    if (money !== 'BOB' && money !== 'USD') throw invalid('currency debe ser BOB o USD');

    if (qr && !options.force) {
      if (qr.status === 'cancelled') throw new Refusal(CODES.wrongState, 'El QR está anulado');
      if (qr.status === 'paid' && qr.singleUse) throw new Refusal(CODES.wrongState, 'El QR ya fue pagado');
      if (laPaz(paidAt).date > qr.dueDate) throw new Refusal(CODES.wrongState, 'El QR está vencido');
      if (!qr.modifyAmount && cents !== qr.amountCents) throw new Refusal(CODES.wrongState, `El monto de este QR no puede modificarse (${toAmount(qr.amountCents).toFixed(2)})`);
    }

    const number = this.numbers.next();
    const senderName = (options.senderName ?? 'JUAN PEREZ').trim() || 'JUAN PEREZ';
    const payment: PaymentRecord = {
      transactionId: String(number),
      qrId,
      knownQr: qr !== undefined,
      currency: money,
      amountCents: cents,
      senderBankCode: (options.senderBankCode ?? '1016').trim() || '1016',
      senderName: senderName.slice(0, MAX_ID),
      senderAccount: maskAccount(options.senderAccount ?? String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999))),
      description: qr?.description ?? '',
      branchCode: qr?.branchCode ?? '',
      paidAt,
    };
    if (qr) {
      qr.payments.push(payment);
      // A forced payment on a cancelled QR leaves it cancelled; any other first payment of a QR marks it paid.
      if (qr.status === 'active') qr.status = 'paid';
    }
    this.payments.push(payment);
    this.balanceCents += cents;
    this.history.push({
      transactionId: number, at: paidAt, documentNumber: number, transactionType: 'C', amountCents: cents,
      description: `ABONO QR ${qrId}`, clienteNote: `${payment.senderName} ${payment.senderAccount}`,
    });
    this.hooks.paid(payment);
    return payment;
  }

  // ── Account history ───────────────────────────────────────────────────────────────────────────

  accountHistory(raw: unknown): { header: Record<string, unknown>; entries: HistoryEntry[] } {
    const body = asObject(raw);
    const account = encrypted(body, 'accountCode', this.config.aesKey);
    const start = requiredDate(body, 'startDate');
    const end = requiredDate(body, 'endDate');
    this.ownAccount(account, 'accountCode');
    if (start > end) throw invalid('startDate no puede ser posterior a endDate');
    if (daysBetween(start, end) > 90) throw invalid('El rango de fechas no puede exceder 90 días');
    const entries = this.history
      .filter((entry) => {
        const day = laPaz(entry.at).date;
        return day >= start && day <= end;
      })
      .sort((a, b) => a.at - b.at || a.transactionId - b.transactionId);
    const header = {
      accountCode: encryptField(this.config.account, this.config.aesKey),
      accountTypeCode: 'CC',
      productName: 'CUENTA CORRIENTE COMERCIAL',
      status: 'ACTIVA',
      currency: ACCOUNT_CURRENCY,
      balance: toAmount(this.balanceCents),
      balanceReserved: toAmount(this.reservedCents),
      balanceRetained: 0,
      balanceAvailable: toAmount(this.balanceCents - this.reservedCents),
    };
    return { header, entries };
  }

  // ── Payment batches ───────────────────────────────────────────────────────────────────────────

  upload(raw: unknown): BatchRecord {
    const body = asObject(raw);
    const batchId = requiredText(body, 'batchId', MAX_ID);
    const type = requiredText(body, 'type', 20);
    if (type !== 'PAYROLL' && type !== 'PROVIDERS') throw invalid('El campo type debe ser PAYROLL o PROVIDERS');
    const description = requiredText(body, 'description');
    const detailedDebit = requiredBoolean(body, 'detailedDebit');
    const account = encrypted(body, 'accountCode', this.config.aesKey);
    const batchCurrency = currency(body, 'batchCurrency');
    const total = amountCents(body.batchAmount, 'batchAmount');
    const aml = amlData(body.AMLData, 'AMLData');
    const paymentCount = requiredInteger(body, 'paymentCount', 1, 1000);
    if (!Array.isArray(body.paymentList)) throw invalid('El campo paymentList es obligatorio y debe ser una lista');
    if (body.paymentList.length === 0) throw invalid('El campo paymentList no puede estar vacío');
    if (body.paymentList.length > 1000) throw invalid('Un lote admite como máximo 1000 pagos');

    const items: BatchItem[] = [];
    const seen = new Set<string>();
    body.paymentList.forEach((entry: unknown, index: number) => {
      const where = `paymentList[${index}]`;
      const item = asObject(entry, where);
      const name = (field: string) => `${where}.${field}`;
      const prefixed = (field: string): Body => ({ [name(field)]: item[field] });
      const batchDetailId = requiredText(prefixed('batchDetailId'), name('batchDetailId'), MAX_ID);
      if (seen.has(batchDetailId)) throw invalid(`batchDetailId repetido en el lote: ${batchDetailId}`);
      seen.add(batchDetailId);
      const cents = amountCents(item.amount, name('amount'));
      const beneficiary = encrypted(prefixed('accountCode'), name('accountCode'), this.config.aesKey);
      const accountTypeCode = requiredText(prefixed('accountTypeCode'), name('accountTypeCode'), 10);
      if (accountTypeCode !== 'CCAD' && accountTypeCode !== 'CMOVILD') throw invalid(`${name('accountTypeCode')} debe ser CCAD o CMOVILD`);
      const bankCode = requiredText(prefixed('bankCode'), name('bankCode'), 10);
      if (!/^\d+$/.test(bankCode)) throw invalid(`${name('bankCode')} debe ser el código numérico de la entidad financiera, como texto`);
      const beneficiaryName = requiredText(prefixed('beneficiaryName'), name('beneficiaryName'));
      const note = requiredText(prefixed('note'), name('note'), 255, true);
      amlData(item.AMLData, name('AMLData'));
      items.push({
        batchDetailId, amountCents: cents, account: beneficiary, accountTypeCode, bankCode, beneficiaryName, note,
        beneficiaryDocId: optionalText(prefixed('beneficiaryDocId'), name('beneficiaryDocId'), 30),
        beneficiaryPhone: optionalText(prefixed('beneficiaryPhone'), name('beneficiaryPhone'), 30),
        beneficiaryEmail: optionalText(prefixed('beneficiaryEmail'), name('beneficiaryEmail'), 120),
        status: 'PENDING',
      });
    });

    if (paymentCount !== items.length) throw invalid(`paymentCount (${paymentCount}) no coincide con la cantidad de pagos (${items.length})`);
    const sum = items.reduce((acc, item) => acc + item.amountCents, 0);
    if (sum !== total) throw invalid(`batchAmount (${toAmount(total).toFixed(2)}) no coincide con la suma de los pagos (${toAmount(sum).toFixed(2)})`);
    this.ownAccount(account, 'accountCode');
    if (batchCurrency !== ACCOUNT_CURRENCY) throw invalid(`La moneda del lote (${batchCurrency}) no coincide con la de la cuenta (${ACCOUNT_CURRENCY})`);
    if (this.knobs.duplicateBatchId === 'refuse' && this.batches.some((batch) => batch.batchId === batchId)) {
      throw new Refusal(CODES.duplicate, `El lote ${batchId} ya fue recibido`);
    }
    if (total > this.balanceCents - this.reservedCents) throw new Refusal(CODES.funds, 'Saldo insuficiente en la cuenta de débito');

    const batch: BatchRecord = {
      bankBatchId: this.numbers.next(), batchId, type, description, detailedDebit, currency: batchCurrency, amountCents: total,
      amlSource: aml.source, amlDestination: aml.destination, uploadedAt: this.now(), items,
      ...(detailedDebit ? {} : { batchDebitId: this.numbers.next() }),
    };
    // The money is held from the upload until each item is decided.
    this.reservedCents += total;
    this.batches.push(batch);
    if (this.knobs.batchDecision === 'auto') this.later(this.knobs.batchDecisionDelayMs, () => this.decideAutomatically(batch));
    return batch;
  }

  /** The automatic decision: an account ending in 0000 is a closed account; every other item goes through. */
  private decideAutomatically(batch: BatchRecord): void {
    for (const item of batch.items) {
      if (item.status !== 'PENDING') continue;
      if (item.account.replace(/\D/g, '').endsWith('0000')) this.decide(batch, item, 'RECH', 'Cuenta cerrada');
      else this.decide(batch, item, 'ACEP');
    }
  }

  /** The batch a control route or the page names: by the client's batchId (the latest such) or the bank's number. */
  findBatch(key: string): BatchRecord | undefined {
    for (let index = this.batches.length - 1; index >= 0; index--) {
      const batch = this.batches[index]!;
      if (batch.batchId === key || String(batch.bankBatchId) === key) return batch;
    }
    return undefined;
  }

  decide(batch: BatchRecord, item: BatchItem, status: 'ACEP' | 'RECH', descriptionStatus?: string): void {
    if (item.status !== 'PENDING') throw new Refusal(CODES.wrongState, `El pago ${item.batchDetailId} ya fue ${item.status === 'ACEP' ? 'aceptado' : 'rechazado'}`);
    item.status = status;
    item.decidedAt = this.now();
    if (status === 'RECH') {
      item.descriptionStatus = descriptionStatus?.trim() || 'Rechazado por el banco';
      this.reservedCents -= item.amountCents;
    } else {
      if (descriptionStatus?.trim()) item.descriptionStatus = descriptionStatus.trim();
      item.transactionIdCredit = String(this.numbers.next());
      if (batch.detailedDebit) {
        item.transactionIdDebit = this.numbers.next();
        this.debit(item.transactionIdDebit, item.amountCents, batch.bankBatchId, `PAGO LOTE ${batch.batchId} ${item.batchDetailId}`, item.note);
      } else {
        item.transactionIdDebit = batch.batchDebitId!;
      }
    }
    // With one debit for the batch, it is booked once every item is decided, for what was accepted.
    if (!batch.detailedDebit && batch.items.every((each) => each.status !== 'PENDING')) {
      const accepted = batch.items.filter((each) => each.status === 'ACEP').reduce((acc, each) => acc + each.amountCents, 0);
      if (accepted > 0) this.debit(batch.batchDebitId!, accepted, batch.bankBatchId, `PAGO LOTE ${batch.batchId}`, batch.description);
    }
    this.hooks.decided(batch, item);
  }

  private debit(transactionId: number, cents: number, documentNumber: number, description: string, note: string): void {
    this.reservedCents -= cents;
    this.balanceCents -= cents;
    this.history.push({ transactionId, at: this.now(), documentNumber, transactionType: 'D', amountCents: -cents, description, clienteNote: note });
  }

  private later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }
}

function amlData(value: unknown, name: string): { source: string; destination: string } {
  const aml = asObject(value === undefined || value === null ? undefined : value, name);
  const prefixed = (field: string): Body => ({ [`${name}.${field}`]: aml[field] });
  return {
    source: requiredText(prefixed('AMLSource'), `${name}.AMLSource`),
    destination: requiredText(prefixed('AMLDestination'), `${name}.AMLDestination`),
  };
}

/** The payer's account as the bank shows it: six asterisks and the last four digits ("******1913"). */
export function maskAccount(account: string): string {
  if (account.includes('*')) return account;
  const digits = account.replace(/\D/g, '');
  return `******${digits.slice(-4).padStart(4, '0')}`;
}
