/**
 * The parts of usage_records' schema that a cold backfill drops while it loads and makes again after (UsageStore
 * beginBulk/endBulk), and that migrations build: one text, so the two cannot drift
 * (tests/integration/backfill-bulk.test.ts holds them to the migrated schema).
 */

/** The quarter-hour triggers (migrations 19 and 35): a cold backfill sums the quarter hours from the rows instead. */
export const QUARTER_HOUR_TRIGGERS = [
  `CREATE TRIGGER usage_quarter_hours_insert AFTER INSERT ON usage_records WHEN NEW.seat IS NULL BEGIN
    INSERT INTO usage_quarter_hours
    VALUES (NEW.ts / 900000, NEW.model, COALESCE(NEW.cost_micros, 0), NEW.cost_micros IS NULL, 1,
      NEW.input_tokens, NEW.output_tokens, NEW.cache_read, NEW.cache_write_5m + NEW.cache_write_1h)
    ON CONFLICT(bucket, model) DO UPDATE SET cost_micros = cost_micros + excluded.cost_micros,
      unpriced = unpriced + excluded.unpriced, records = records + 1,
      input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
      cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write;
  END`,
  `CREATE TRIGGER usage_quarter_hours_update AFTER UPDATE OF cost_micros, output_tokens ON usage_records WHEN NEW.seat IS NULL BEGIN
    UPDATE usage_quarter_hours
    SET cost_micros = cost_micros - COALESCE(OLD.cost_micros, 0) + COALESCE(NEW.cost_micros, 0),
        unpriced = unpriced - (OLD.cost_micros IS NULL) + (NEW.cost_micros IS NULL),
        output_tokens = output_tokens - OLD.output_tokens + NEW.output_tokens
    WHERE bucket = NEW.ts / 900000 AND model = NEW.model;
  END`,
];
export const QUARTER_HOUR_TRIGGER_NAMES = ['usage_quarter_hours_insert', 'usage_quarter_hours_update'];
/** The quarter hours summed from the rows (what the triggers keep up row by row). */
export const SUM_QUARTER_HOURS = `DELETE FROM usage_quarter_hours;
  INSERT INTO usage_quarter_hours
    SELECT ts / 900000, model, COALESCE(SUM(cost_micros), 0), SUM(cost_micros IS NULL), COUNT(*),
      SUM(input_tokens), SUM(output_tokens), SUM(cache_read), SUM(cache_write_5m + cache_write_1h)
    FROM usage_records WHERE seat IS NULL GROUP BY ts / 900000, model;`;

/**
 * One row per reply (message.id + requestId): the key that makes every insert idempotent. A unique index rather than
 * the table's primary key (migration 35), so a cold backfill can load without it and build it once, sorted, at the end.
 */
export const DEDUP_INDEX = 'usage_dedup';
export const CREATE_DEDUP_INDEX = `CREATE UNIQUE INDEX ${DEDUP_INDEX} ON usage_records(dedup_key)`;
