// The accounts and resources the fuzz requests act on, made through the API like a client would, and the
// snapshot that shows whether any of them changed.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.ts';
import { percentEncode } from './http.ts';
import { hostileText, type FieldHints } from './json-schema-arbitrary.ts';
import type { Caller, Parameter, Route } from './openapi-routes.ts';
import type { RequestScope } from './requests.ts';

export interface MerchantAccount {
  businessCode: number;
  apiKey: string;
  keyPrefix: string;
}

export interface PartnerAccount {
  partnerId: number;
  masterKey: string;
  keyPrefix: string;
}

type ResourceKind = 'qr' | 'payToken' | 'transfer' | 'endpoint' | 'event' | 'intent' | 'merchant' | 'partner' | 'keyPrefix';

/** A partner and a merchant of it with ACH on and money collected, and one of each resource the API has. */
export interface World {
  merchant: MerchantAccount;
  partner: PartnerAccount;
  /** Existing resources by kind, as path values (percent-encoded). */
  resources: Record<ResourceKind, string[]>;
}

/** The resource a path parameter names, from the path segment before it (`/transfers/{id}` → transfer). */
const RESOURCE_BEFORE_PARAMETER: Record<string, ResourceKind> = {
  'simple-qrs': 'qr', pay: 'payToken', transfers: 'transfer', 'webhook-endpoints': 'endpoint', events: 'event',
  intent: 'intent', merchants: 'merchant', partners: 'partner', 'api-keys': 'keyPrefix',
};

async function expectStatus(response: Promise<{ status: number; text: string; body: any }>, status: number, what: string) {
  const answered = await response;
  if (answered.status !== status) throw new Error(`${what} answered ${answered.status}: ${answered.text}`);
  return answered.body;
}

export async function buildWorld(t: TestApp, label: string): Promise<World> {
  const partner = await t.createPartner(`${label} partner`);
  const merchant = await t.createMerchant({ name: `${label} merchant`, ach_enabled: true, partner_id: partner.partnerId });
  const asMerchant = { apiKey: merchant.apiKey };
  const bc = merchant.businessCode;

  const createQr = (body: Record<string, unknown>) => expectStatus(t.request('POST', '/api/v2/simple-qrs', { ...asMerchant, body: { business_code: bc, ...body } }), 201, 'creating a QR');
  const paid = await createQr({ amount: '500.00', description: `${label}: paid` });
  await expectStatus(t.request('POST', `/api/v2/sandbox/simple-qrs/${paid.id}/payments`, { ...asMerchant, body: {} }), 201, 'paying a QR');
  const open = await createQr({ amount: 25, modify_amount: true, is_multi_use: true, description: `${label}: open` });
  const canceled = await createQr({ amount: 5 });
  await expectStatus(t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { ...asMerchant, body: {} }), 200, 'canceling a QR');
  const transfer = await expectStatus(t.request('POST', '/api/v2/transfers', {
    ...asMerchant,
    headers: { 'idempotency-key': randomUUID() },
    body: { business_code: bc, amount: '10.00', currency: 'BOB', destination: { type: 'bank_account', bank_code: 1001, account_number: '1000-2000-3000', account_titular: 'Ana Pérez' } },
  }), 201, 'creating a transfer');
  const endpoint = await expectStatus(t.request('POST', '/api/v2/webhook-endpoints', { ...asMerchant, body: { url: 'https://hooks.example/fuzz' } }), 201, 'creating a webhook endpoint');
  await expectStatus(t.request('POST', '/api/v2/webhook-endpoints', { apiKey: partner.masterKey, body: { url: 'https://hooks.example/partner' } }), 201, 'creating a partner webhook endpoint');
  const intent = await expectStatus(t.request('POST', '/api/v2/onboarding/intent', {
    apiKey: partner.masterKey, headers: { 'idempotency-key': randomUUID() }, body: { metadata: { label } },
  }), 201, 'creating an onboarding intent');
  const events = await expectStatus(t.request('GET', '/api/v2/events?per_page=100', asMerchant), 200, 'listing events');

  const qrs = [paid, open, canceled];
  return {
    merchant,
    partner,
    resources: {
      qr: qrs.map((qr) => qr.id),
      payToken: qrs.map((qr) => (qr.qr_url as string).split('/pay/')[1]!),
      transfer: [String(transfer.id)],
      endpoint: [endpoint.id],
      event: events.data.map((event: { id: string }) => event.id),
      intent: [intent.code],
      merchant: [String(bc)],
      partner: [String(partner.partnerId)],
      keyPrefix: [merchant.keyPrefix],
    },
  };
}

/**
 * Points the operator routes of `world` at a merchant of their own, with spare API keys: a well-formed
 * PATCH may suspend it and a DELETE may revoke its keys without stopping the rest of the run.
 */
export async function withOperatorSubject(t: TestApp, world: World): Promise<World> {
  const subject = await t.createMerchant({ name: 'Operator subject', ach_enabled: true });
  const spareKeys = [];
  for (let i = 0; i < 3; i++) {
    spareKeys.push((await expectStatus(t.request('POST', `/admin/v1/merchants/${subject.businessCode}/api-keys`), 201, 'creating an API key')).key_prefix);
  }
  return { ...world, resources: { ...world.resources, merchant: [String(subject.businessCode)], keyPrefix: spareKeys.map(percentEncode) } };
}

export function credentialsFor(world: World, caller: Caller): Record<string, string> {
  switch (caller) {
    case 'merchant': return { 'x-api-key': world.merchant.apiKey };
    case 'partner': return { 'x-api-key': world.partner.masterKey };
    case 'admin': return { authorization: `Bearer ${ADMIN_TOKEN}` };
    case 'public': return {};
  }
}

/**
 * Requests for `world`. `exact`: fields bound to the caller always name it (the base of a mutation must be
 * right but for the mutation); otherwise they do most of the time, and sometimes hold anything.
 */
export function scopeOf(world: World, exact: boolean): RequestScope {
  const mostly = <T>(usual: T, other: fc.Arbitrary<unknown>) => exact ? fc.constant(usual) : fc.oneof({ weight: 8, arbitrary: fc.constant(usual) }, { weight: 2, arbitrary: other });
  const hints: FieldHints = {
    business_code: mostly(world.merchant.businessCode, fc.integer()),
    partner_id: mostly(world.partner.partnerId, fc.integer({ min: 1 })),
    url: mostly('https://hooks.example/fuzz', fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), hostileText({ minLength: 1, maxLength: 80 }))),
    qr_expiration: mostly('+5m', fc.oneof(
      fc.constantFrom('+1m', '+2 hours', '+1d', '+365 days', '+366d', '+0m', '+9999999d', '2027-01-01 10:00:00', '2020-01-01 00:00:00', '2027-02-30 10:00:00', '2027-01-01 24:00:00'),
      hostileText({ maxLength: 40 }),
    )),
  };
  return {
    hints,
    pathValues(route: Route, parameter: Parameter) {
      const segments = route.template.split('/');
      const before = segments[segments.indexOf(`{${parameter.name}}`) - 1] ?? '';
      const kind = RESOURCE_BEFORE_PARAMETER[before];
      return kind ? world.resources[kind] : [];
    },
  };
}

/**
 * Everything a client of `world` can read about its own state: the balance, every page of every list, its
 * profile and keys as the operator sees them (without `last_used_at`, which reading itself updates), and
 * the partner's side.
 */
export async function snapshotOf(t: TestApp, world: World): Promise<Record<string, unknown>> {
  const asMerchant = { apiKey: world.merchant.apiKey };
  const asPartner = { apiKey: world.partner.masterKey };
  const read = (path: string, who: { apiKey?: string } = {}) => expectStatus(t.request('GET', path, who), 200, `GET ${path}`);
  const allPages = async (path: string, who: { apiKey: string }) => {
    const items: unknown[] = [];
    for (let page = 1; ; page++) {
      const { data, meta } = await read(`${path}?per_page=100&page=${page}`, who);
      items.push(...data);
      if (page >= meta.last_page) return { total: meta.total, items };
    }
  };
  const withoutLastUse = ({ data }: { data: Array<Record<string, unknown>> }) => data.map(({ last_used_at: _ignored, ...key }) => key);
  const bc = world.merchant.businessCode;
  const parts = {
    balance: read('/api/v2/balance', asMerchant),
    movements: allPages('/api/v2/balance/movements', asMerchant),
    qrs: allPages('/api/v2/simple-qrs', asMerchant),
    transfers: allPages('/api/v2/transfers', asMerchant),
    webhookEndpoints: allPages('/api/v2/webhook-endpoints', asMerchant),
    events: allPages('/api/v2/events', asMerchant),
    merchant: read(`/admin/v1/merchants/${bc}`),
    apiKeys: read(`/admin/v1/merchants/${bc}/api-keys`).then(withoutLastUse),
    partnerWebhookEndpoints: allPages('/api/v2/webhook-endpoints', asPartner),
    partnerEvents: allPages('/api/v2/events', asPartner),
    masterKeys: read(`/admin/v1/partners/${world.partner.partnerId}/api-keys`).then(withoutLastUse),
    intents: Promise.all(world.resources.intent.map((code) => read(`/api/v2/onboarding/intent/${code}`, asPartner))),
  };
  return Object.fromEntries(await Promise.all(Object.entries(parts).map(async ([part, value]) => [part, await value])));
}
