import type { ApiAnswer } from '../scheduler/api.js';
import { buildReport, parseReportDate, type ReportOptions } from '../../core/report/report.js';
import { isValidTimeZone, zonedTimeToEpoch } from '../../core/zoned-time.js';
import { ReportQuery } from '../../protocol/requests.js';
import type { PlatformKeyStore } from '../store/platform-key.js';
import type { UsageStore } from '../store/usage.js';

/**
 * `GET /v1/report`: `sleds report daily|weekly|monthly|session` (core/report/report.ts) over what musher recorded:
 * every reply (its tokens, its dollars from the effective-dated price table) and the platform key's spend.
 */

export interface ReportDeps {
  usage: Pick<UsageStore, 'reportRows'>;
  platformKey: Pick<PlatformKeyStore, 'reportRows'>;
  /** musher's zone: the default when the client names none. */
  timeZone: string;
  /** This seat's name (the replies recorded without a sender's seat are its own). */
  seat: string;
}

const DAY = 86_400_000;

/** A local date's start as an epoch, with a day's margin either side: the core filters by the exact local day. */
function bound(date: string | null, zone: string, side: 'from' | 'to'): number {
  if (date === null) return side === 'from' ? 0 : Number.MAX_SAFE_INTEGER;
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const start = zonedTimeToEpoch(y, m, d, 0, zone);
  return side === 'from' ? start - DAY : start + 2 * DAY;
}

export function reportRoute(deps: ReportDeps, rawQuery: unknown): ApiAnswer {
  const q = ReportQuery.safeParse(rawQuery ?? {});
  if (!q.success) return { status: 400, body: { error: q.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ') } };
  const zone = q.data.tz ?? deps.timeZone;
  if (!isValidTimeZone(zone)) return { status: 400, body: { error: `'${zone}' is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)` } };
  const since = q.data.since === undefined ? null : parseReportDate(q.data.since);
  const until = q.data.until === undefined ? null : parseReportDate(q.data.until);
  if (q.data.since !== undefined && since === null) return { status: 400, body: { error: `--since '${q.data.since}' is not a date: YYYYMMDD or YYYY-MM-DD` } };
  if (q.data.until !== undefined && until === null) return { status: 400, body: { error: `--until '${q.data.until}' is not a date: YYYYMMDD or YYYY-MM-DD` } };
  if (since !== null && until !== null && since > until) return { status: 400, body: { error: `--since ${since} is after --until ${until}` } };
  const opts: ReportOptions = { period: q.data.period, by: q.data.by ?? 'model', timeZone: zone, since, until, startOfWeek: q.data.start_of_week ?? 'sunday' };
  const from = bound(since, zone, 'from');
  const to = bound(until, zone, 'to');
  return { status: 200, body: buildReport(deps.usage.reportRows(from, to, deps.seat), deps.platformKey.reportRows(from, to), opts) };
}
