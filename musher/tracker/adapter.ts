/**
 * A tracker (GitHub issues today; Jira or Linear are one more adapter): where items that ask for sleds are found,
 * and where sleds writes its one comment on each. The intake (intake.ts) owns the rest: tasks, the record of
 * comments, the schedule.
 */

export interface TrackerItem {
  /** The item's URL: the task's sourceRef, unique across trackers. */
  ref: string;
  /** How the adapter addresses it: "acme/shop#12". */
  key: string;
  title: string;
  body: string;
  /** The item's repository or project as the tracker names it ("acme/shop"), if it has one. */
  repo: string | null;
}

export type AdapterResult<T> = { ok: true; value: T } | { ok: false; error: string };

export interface SearchAnswer {
  items: TrackerItem[];
  /** Why the search stopped short this round (a rate limit on a later page): it goes on from there next round. */
  cut: string | null;
}

export interface TrackerAdapter {
  /** "github". */
  readonly name: string;
  /** The wait between rounds; null when this tracker is not configured (nothing to ask). */
  interval(): number | null;
  /**
   * The open items that ask for sleds: one query per round, its pages followed as far as needed (the adapter may
   * leave out items it has already given and that have not changed since).
   */
  search(): Promise<AdapterResult<SearchAnswer>>;
  /** sleds' comment already on the item (the one whose body `isOurs` recognizes), if any: its ref. */
  findComment(itemKey: string, isOurs: (body: string) => boolean): Promise<AdapterResult<string | null>>;
  /** Writes a comment; gives its ref. */
  comment(itemKey: string, body: string): Promise<AdapterResult<string>>;
  updateComment(itemKey: string, commentRef: string, body: string): Promise<AdapterResult<void>>;
}
