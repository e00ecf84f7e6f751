// The bank's own API under `/ApiGateway/`: the seven calls a merchant makes, plus the two encryption
// helpers the specification mentions. Each answer carries `responseCode` (0 = success) and `message`
// ("" on success). Faults and delays from the knobs are applied around the call by server.ts.
import type { IncomingMessage } from 'node:http';
import { compactToIsoDate } from './clock.ts';
import type { Operation } from './knobs.ts';
import type { Bank } from './state.ts';
import { invalid } from './validate.ts';
import { historyLine, paymentQr } from './wire.ts';

export interface BankCall {
  request: IncomingMessage;
  /** The parsed JSON body (undefined for a GET or an empty body). */
  body: unknown;
  /** The path's variable part (the qrId or the date), already decoded. */
  param: string;
}

export interface BankRoute {
  operation: Operation;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path after `/ApiGateway/`; `{}` stands for one path segment. */
  pattern: RegExp;
  /** Whether a live bearer token is needed. */
  auth: boolean;
  /** The answer's fields besides responseCode/message; throws a Refusal to refuse. */
  run(bank: Bank, call: BankCall, statusKey: string): Promise<Record<string, unknown>> | Record<string, unknown>;
}

export const BANK_ROUTES: BankRoute[] = [
  {
    operation: 'authenticate', method: 'POST', pattern: /^api\/authentication\/authenticate$/, auth: false,
    run: (bank, call) => ({ token: bank.authenticate(call.body) }),
  },
  {
    operation: 'generateQR', method: 'POST', pattern: /^api\/qrsimple\/generateQR$/, auth: true,
    run: async (bank, call) => bank.generateQR(call.body),
  },
  {
    operation: 'cancelQR', method: 'DELETE', pattern: /^api\/qrsimple\/cancelQR$/, auth: true,
    run: (bank, call) => {
      bank.cancelQR(call.body);
      return {};
    },
  },
  {
    operation: 'statusQR', method: 'GET', pattern: /^api\/qrsimple\/v2\/statusQR\/([^/]+)$/, auth: true,
    run: (bank, call, statusKey) => {
      const status = bank.statusQR(call.param);
      return { [statusKey]: status.code, payment: status.payments.map(paymentQr) };
    },
  },
  {
    operation: 'paidQR', method: 'GET', pattern: /^api\/qrsimple\/v2\/paidQR\/([^/]+)$/, auth: true,
    run: (bank, call) => {
      const day = compactToIsoDate(call.param);
      if (!day) throw invalid(`La fecha ${call.param.slice(0, 20)} no es válida: se espera yyyyMMdd`);
      return { paymentList: bank.paidOn(day).map(paymentQr) };
    },
  },
  {
    operation: 'accountsHistory', method: 'POST', pattern: /^api\/accounts\/history$/, auth: true,
    run: (bank, call) => {
      const { header, entries } = bank.accountHistory(call.body);
      return { accountHeader: header, accountDetailList: entries.map(historyLine), accountWithheldList: [] };
    },
  },
  {
    operation: 'batchUpload', method: 'POST', pattern: /^api\/batchPayment\/upload$/, auth: true,
    run: (bank, call) => ({ bankBatchId: bank.upload(call.body).bankBatchId }),
  },
];
