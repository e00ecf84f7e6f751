// The simulator's page at `/`, in Spanish like the bank's users: the QRs issued, with a form to pay each
// one as a payer would from any bank's app; the batch items waiting for a decision, with accept and reject
// buttons; and the last callbacks sent to the merchant. Plain server-rendered HTML with forms that POST
// and redirect back (no script, no framework), so it works in any browser and in a test with fetch.
import { laPaz } from './clock.ts';
import type { CallbackAttempt } from './callbacks.ts';
import type { Bank, QrRecord } from './state.ts';
import { Refusal, toAmount } from './validate.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STATUS_TEXT: Record<QrRecord['status'], string> = { active: 'Activo (0)', paid: 'Pagado (1)', cancelled: 'Anulado (9)' };

function money(cents: number, currency: string): string {
  return `${toAmount(cents).toFixed(2)} ${currency}`;
}

function qrRow(qr: QrRecord, today: string): string {
  const expired = today > qr.dueDate;
  const payable = !expired && qr.status !== 'cancelled' && !(qr.status === 'paid' && qr.singleUse);
  const form = payable
    ? `<form method="post" action="/pagar" class="pay">
        <input type="hidden" name="qrId" value="${escapeHtml(qr.qrId)}">
        <label>Monto <input name="amount" value="${toAmount(qr.amountCents).toFixed(2)}" inputmode="decimal" size="9" ${qr.modifyAmount ? '' : 'readonly'}></label>
        <label>Nombre del pagador <input name="senderName" value="JUAN PEREZ" size="16"></label>
        <label>Banco (código ASFI) <input name="senderBankCode" value="1016" size="5"></label>
        <label>Cuenta <input name="senderAccount" value="4011561913" size="12"></label>
        <button type="submit">Pagar</button>
      </form>`
    : `<em>${expired ? 'Vencido' : 'No admite más pagos'}</em>`;
  const payments = qr.payments.map((p) => `<li>${money(p.amountCents, p.currency)} de ${escapeHtml(p.senderName)} (${escapeHtml(p.senderAccount)}, banco ${escapeHtml(p.senderBankCode)}) — transacción ${escapeHtml(p.transactionId)}</li>`).join('');
  return `<tr>
    <td><img src="data:image/png;base64,${qr.image}" alt="QR ${escapeHtml(qr.qrId)}" width="96" height="96"></td>
    <td><code>${escapeHtml(qr.qrId)}</code><br><small>comercio: ${escapeHtml(qr.transactionId)}</small></td>
    <td>${money(qr.amountCents, qr.currency)}${qr.modifyAmount ? '<br><small>monto modificable</small>' : ''}</td>
    <td>${escapeHtml(qr.description)}</td>
    <td>${qr.singleUse ? 'Un solo pago' : 'Varios pagos'}<br><small>vence ${escapeHtml(qr.dueDate)}</small></td>
    <td>${STATUS_TEXT[qr.status]}${payments ? `<ul>${payments}</ul>` : ''}</td>
    <td>${form}</td>
  </tr>`;
}

/** One form per button, so pressing Enter in the reason field rejects rather than accepts. */
function decisionForm(bankBatchId: number, batchDetailId: string, status: 'ACEP' | 'RECH'): string {
  return `<form method="post" action="/decidir" class="decide">
        <input type="hidden" name="batch" value="${bankBatchId}">
        <input type="hidden" name="batchDetailId" value="${escapeHtml(batchDetailId)}">
        <input type="hidden" name="status" value="${status}">
        ${status === 'RECH' ? '<input name="descriptionStatus" placeholder="Motivo del rechazo" aria-label="Motivo del rechazo" size="18"> <button type="submit">Rechazar</button>' : '<button type="submit">Aceptar</button>'}
      </form>`;
}

function callbackRow(attempt: CallbackAttempt): string {
  const result = attempt.outcome === 'answered' ? `HTTP ${attempt.httpStatus}${attempt.acknowledged ? ' ✔' : ''}` : attempt.outcome;
  return `<tr><td>${escapeHtml(attempt.at)}</td><td>${escapeHtml(attempt.kind)}${attempt.contradiction ? ' (contradicción)' : ''}${attempt.copy > 1 ? ' (copia)' : ''}</td>
    <td>${attempt.attempt}</td><td>${escapeHtml(result)}${attempt.error ? ` — ${escapeHtml(attempt.error)}` : ''}${attempt.willRetry ? ' — se reintentará' : ''}</td></tr>`;
}

export function renderPage(bank: Bank, callbacks: CallbackAttempt[], notice: string | null, now: number): string {
  const today = laPaz(now).date;
  const qrs = [...bank.qrs.values()].reverse();
  const pending = bank.batches.flatMap((batch) => batch.items.filter((item) => item.status === 'PENDING').map((item) => ({ batch, item })));
  const decided = bank.batches.flatMap((batch) => batch.items.filter((item) => item.status !== 'PENDING').map((item) => ({ batch, item }))).slice(-20).reverse();
  const pendingRows = pending.map(({ batch, item }) => `<tr>
      <td>${escapeHtml(batch.batchId)}<br><small>banco: ${batch.bankBatchId}</small></td>
      <td>${escapeHtml(item.batchDetailId)}</td>
      <td>${money(item.amountCents, batch.currency)}</td>
      <td>${escapeHtml(item.beneficiaryName)}<br><small>${escapeHtml(item.account)} · ${escapeHtml(item.accountTypeCode)} · banco ${escapeHtml(item.bankCode)}</small></td>
      <td>${decisionForm(batch.bankBatchId, item.batchDetailId, 'ACEP')}${decisionForm(batch.bankBatchId, item.batchDetailId, 'RECH')}</td></tr>`).join('');
  const decidedRows = decided.map(({ batch, item }) => `<tr><td>${escapeHtml(batch.batchId)}</td><td>${escapeHtml(item.batchDetailId)}</td>
      <td>${money(item.amountCents, batch.currency)}</td><td>${item.status === 'ACEP' ? 'Aceptado' : 'Rechazado'}${item.descriptionStatus ? ` — ${escapeHtml(item.descriptionStatus)}` : ''}</td></tr>`).join('');
  const lastCallbacks = callbacks.slice(-20).reverse().map(callbackRow).join('');
  return `<!doctype html>
<html lang="es">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Simulador Banco Económico — API Market</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1b1b1b; }
  table { border-collapse: collapse; width: 100%; margin-bottom: 1.5rem; }
  th, td { border-bottom: 1px solid #ddd; padding: .4rem; text-align: left; vertical-align: top; }
  form.pay label { display: block; margin-bottom: .2rem; }
  form.decide { display: inline-block; margin-right: .5rem; }
  .notice { padding: .6rem; background: #eef6ee; border: 1px solid #9c9; }
  .error { background: #fbeaea; border-color: #d99; }
  small { color: #555; }
</style>
</head>
<body>
<h1>Simulador del Banco Económico (API Market)</h1>
<p>Un banco de prueba en su escritorio: no mueve dinero real. Cuenta del comercio <code>${escapeHtml(bank.config.account)}</code>,
saldo ${money(bank.balanceCents, 'BOB')} (reservado ${money(bank.reservedCents, 'BOB')}). Hoy en La Paz: ${today}. <a href="/">Actualizar</a></p>
${notice ? `<p class="notice${notice.startsWith('Error') ? ' error' : ''}" role="status">${escapeHtml(notice)}</p>` : ''}
<h2>QR emitidos</h2>
${qrs.length === 0 ? '<p>Todavía no se emitió ningún QR.</p>' : `<table><thead><tr><th>QR</th><th>Id</th><th>Monto</th><th>Glosa</th><th>Uso</th><th>Estado y pagos</th><th>Pagar como cliente</th></tr></thead><tbody>${qrs.map((qr) => qrRow(qr, today)).join('')}</tbody></table>`}
<h2>Pagos de planillas pendientes</h2>
${pending.length === 0 ? '<p>No hay pagos pendientes de decisión.</p>' : `<table><thead><tr><th>Lote</th><th>Pago</th><th>Monto</th><th>Beneficiario</th><th>Decisión</th></tr></thead><tbody>${pendingRows}</tbody></table>`}
${decided.length === 0 ? '' : `<h2>Pagos decididos</h2><table><thead><tr><th>Lote</th><th>Pago</th><th>Monto</th><th>Resultado</th></tr></thead><tbody>${decidedRows}</tbody></table>`}
<h2>Avisos enviados al comercio</h2>
${lastCallbacks ? `<table><thead><tr><th>Hora</th><th>Aviso</th><th>Intento</th><th>Resultado</th></tr></thead><tbody>${lastCallbacks}</tbody></table>` : '<p>Todavía no se envió ningún aviso.</p>'}
</body>
</html>`;
}

/** Handles a form of the page; answers the notice to show after the redirect. */
export function handleForm(bank: Bank, action: 'pagar' | 'decidir', form: URLSearchParams): string {
  try {
    if (action === 'pagar') {
      const qrId = form.get('qrId') ?? '';
      if (!bank.qrs.has(qrId)) return 'Error: ese QR no existe';
      const amountText = (form.get('amount') ?? '').trim().replace(',', '.');
      if (!/^\d+(\.\d{1,2})?$/.test(amountText)) return 'Error: el monto debe tener como máximo dos decimales';
      const payment = bank.pay(qrId, {
        amount: Number(amountText),
        senderName: form.get('senderName') ?? undefined,
        senderBankCode: form.get('senderBankCode') ?? undefined,
        senderAccount: form.get('senderAccount') || undefined,
      });
      return `Pago registrado: ${money(payment.amountCents, payment.currency)} al QR ${qrId} (transacción ${payment.transactionId}).`;
    }
    const batch = bank.findBatch(form.get('batch') ?? '');
    const item = batch?.items.find((each) => each.batchDetailId === form.get('batchDetailId'));
    if (!batch || !item) return 'Error: ese pago de planilla no existe';
    const status = form.get('status');
    if (status !== 'ACEP' && status !== 'RECH') return 'Error: elija Aceptar o Rechazar';
    bank.decide(batch, item, status, status === 'RECH' ? (form.get('descriptionStatus') ?? undefined) : undefined);
    return `Pago ${item.batchDetailId} ${status === 'ACEP' ? 'aceptado' : `rechazado: ${item.descriptionStatus}`}.`;
  } catch (error) {
    if (error instanceof Refusal) return `Error: ${error.message}`;
    throw error;
  }
}
