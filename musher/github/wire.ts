import { z } from 'zod';

/** The slices of GitHub's REST answers sleds reads (unknown fields tolerated: GitHub adds fields all the time). */

export const PullRequest = z.looseObject({
  number: z.number().int(),
  state: z.string(),
  title: z.string().optional(),
  body: z.string().nullable().optional(),
  html_url: z.string(),
  created_at: z.string(),
  head: z.looseObject({
    ref: z.string(),
    label: z.string().optional(),
    repo: z.looseObject({ full_name: z.string() }).nullable().optional(),
  }),
});
export type PullRequest = z.infer<typeof PullRequest>;
export const PullRequests = z.array(PullRequest);

export const Issue = z.looseObject({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullable().optional(),
  html_url: z.string(),
  repository_url: z.string(),
  state: z.string(),
  /** Moves when the issue is edited, labelled, reopened or commented on: the search's sort key. */
  updated_at: z.string().optional(),
  pull_request: z.unknown().optional(),
});
export type Issue = z.infer<typeof Issue>;

export const IssueSearch = z.looseObject({
  total_count: z.number().int(),
  incomplete_results: z.boolean(),
  items: z.array(Issue),
});

export const IssueComment = z.looseObject({
  id: z.number().int(),
  body: z.string().nullable().optional(),
  html_url: z.string().optional(),
});
export const IssueComments = z.array(IssueComment);
