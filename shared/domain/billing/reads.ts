import { ProblemError } from '../../errors.js';
import { billingStore } from '../../store/billing.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { accountOf, toInvoice, usageOf, type BillingRead } from './account.js';
import {
  parseStoredBillingAccount,
  parseStoredBillingTeam,
  type StoredBilling,
  type StoredBillingTeam,
} from './record.js';
import type { BillingInvoice, BillingOverview, ListBillingInvoicesQuery } from './schema.js';

/** Reads of the creator's own billing (DESIGN D20): the account with its usage, and the invoices. */

/**
 * Reads the team item (absent when there is no such team) and the billing account item (empty when never written): one
 * BatchGetItem.
 */
export async function readBillingItems(
  store: Store,
  teamId: string,
): Promise<{ team: StoredBillingTeam | undefined; billing: StoredBilling }> {
  const { team: teamItem, account } = await billingStore.readTeamAndAccount(store, teamId);
  const team = teamItem ? parseStoredBillingTeam(teamItem) : undefined;
  const billing = account ? parseStoredBillingAccount(account) : {};
  return { team, billing };
}

/**
 * Reads the team item and the billing account item (one BatchGetItem). Errors: NOT_FOUND when the team does not exist.
 */
export async function readBilling(store: Store, teamId: string): Promise<BillingRead> {
  const { team, billing } = await readBillingItems(store, teamId);
  if (!team) throw new ProblemError('NOT_FOUND', `No team ${teamId}.`);
  return { team, billing };
}

/**
 * `GET /v1/billing`: the team's tier, limits, usage (the counters), status and current period.
 * Errors: NOT_FOUND when the team does not exist.
 */
export async function getBillingOverview(
  runtime: Pick<UnitOfWorkRuntime, 'store' | 'clock'>,
  teamId: string,
): Promise<BillingOverview> {
  const read = await readBilling(runtime.store, teamId);
  return { ...accountOf(teamId, read, runtime.clock.nowMs()), usage: usageOf(read.team) };
}

/** `GET /v1/billing/invoices/{id}`: one invoice of the team. Errors: NOT_FOUND (absent or another team's). */
export async function getBillingInvoice(store: Store, teamId: string, invoiceId: string): Promise<BillingInvoice> {
  const item = await billingStore.readInvoice(store, teamId, invoiceId);
  if (!item) throw new ProblemError('NOT_FOUND', `No invoice ${invoiceId}.`);
  return toInvoice(item);
}

/**
 * `GET /v1/billing/invoices`: the team's invoices, newest first, paged (DESIGN D12), optionally only one
 * `status` (applied by DynamoDB, so a page may be short while `next_cursor` is set). Errors:
 * VALIDATION_FAILED for a cursor of another list.
 */
export async function listBillingInvoices(
  store: Store,
  teamId: string,
  query: Pick<ListBillingInvoicesQuery, 'limit' | 'cursor' | 'status'>,
): Promise<Page<BillingInvoice>> {
  return billingStore.listInvoices(store, teamId, query, toInvoice);
}
