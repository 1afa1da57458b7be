/*
 * totals.c: the running totals panel.
 */
#include <stdio.h>

#include "tui/fmt.h"
#include "tui/totals.h"

#define B 32

int tui_totals_draw(struct tui_screen *s, struct tui_rect r,
                    const struct sim_snapshot *snap)
{
	const struct sim_summary *m = &snap->summary;
	char a[B], b[B], c[B], d[B];
	char line[5][160];
	enum tui_style st[5];
	int y = r.y;

	if (r.h < 2)
		return 0;
	tui_screen_text(s, r.x, y++, r.w, TUI_HEAD, "SINCE t = 0");

	if (sim_strategy_info(snap->config.strategy)->batches)    /* in sales, B to a transaction */
		snprintf(line[0], sizeof line[0], "sales   %s applied, %s refused, %s failed",
		         tui_fmt_int(a, sizeof a, m->count.visible),
		         tui_fmt_int(b, sizeof b, (int64_t)m->ledger.refused),
		         tui_fmt_int(c, sizeof c, (int64_t)(m->failed + m->abandoned) *
		                     sim_config_batch(&snap->config)));
	else
		snprintf(line[0], sizeof line[0], "likes   %s offered, %s done, %s failed",
		         tui_fmt_int(a, sizeof a, (int64_t)m->offered),
		         tui_fmt_int(b, sizeof b, (int64_t)m->completed),
		         tui_fmt_int(c, sizeof c, (int64_t)(m->failed + m->abandoned)));
	st[0] = m->failed + m->abandoned ? TUI_WARN : TUI_NORMAL;
	snprintf(line[1], sizeof line[1], "login   %s calls, %s failed",
	         tui_fmt_int(a, sizeof a, (int64_t)m->unrelated.offered),
	         tui_fmt_int(b, sizeof b, (int64_t)m->unrelated.failed));
	st[1] = m->unrelated.failed ? TUI_BAD : TUI_NORMAL;
	snprintf(line[2], sizeof line[2], "latency p50 %s, p99 %s, max %s",
	         tui_fmt_ms(a, sizeof a, m->latency_ms.p50),
	         tui_fmt_ms(b, sizeof b, m->latency_ms.p99),
	         tui_fmt_ms(c, sizeof c, m->latency_ms.max));
	st[2] = TUI_NORMAL;
	if (snap->counter_pool_size > 0 && m->counter_pool.exhausted_at_s >= 0)
		snprintf(line[3], sizeof line[3], "pools   likes' own full at t = %s; shared %s",
		         tui_fmt_s(a, sizeof a, m->counter_pool.exhausted_at_s),
		         m->pool.exhausted_at_s >= 0 ? "full too" : "never full");
	else if (m->pool.exhausted_at_s >= 0)
		snprintf(line[3], sizeof line[3], "pool    full at t = %s, up to %s waiting",
		         tui_fmt_s(a, sizeof a, m->pool.exhausted_at_s),
		         tui_fmt_int(d, sizeof d, m->pool.max_waiters));
	else
		snprintf(line[3], sizeof line[3], "pool    never full (at most %d in use)",
		         m->pool.max_in_use);
	st[3] = m->pool.exhausted_at_s >= 0 ? TUI_WARN : TUI_NORMAL;

	if (m->count.doubled > 0 && snap->config.strategy == SIM_QUEUE)
		snprintf(line[4], sizeof line[4], "count   %s visible, %s acked, +%s redelivered",
		         tui_fmt_int(a, sizeof a, m->count.visible),
		         tui_fmt_int(b, sizeof b, m->count.true_count),
		         tui_fmt_int(c, sizeof c, m->count.doubled));
	else if (m->count.doubled > 0 || m->count.unacked > 0)
		snprintf(line[4], sizeof line[4], "count   %s visible: %s counted twice by blind "
		         "retries, %s unacked", tui_fmt_int(a, sizeof a, m->count.visible),
		         tui_fmt_int(b, sizeof b, m->count.doubled),
		         tui_fmt_int(c, sizeof c, m->count.unacked));
	else if (m->count.lost > 0)
		snprintf(line[4], sizeof line[4], "count   %s visible, %s acknowledged, %s lost",
		         tui_fmt_int(a, sizeof a, m->count.visible),
		         tui_fmt_int(b, sizeof b, m->count.true_count),
		         tui_fmt_int(c, sizeof c, m->count.lost));
	else
		snprintf(line[4], sizeof line[4], "count   %s visible, %s acknowledged",
		         tui_fmt_int(a, sizeof a, m->count.visible),
		         tui_fmt_int(b, sizeof b, m->count.true_count));
	st[4] = m->count.doubled > 0 || m->count.lost > 0 ? TUI_BAD
	      : m->count.unacked > 0 ? TUI_WARN : TUI_NORMAL;

	for (int i = 0; i < 5 && y < r.y + r.h; i++)
		tui_screen_text(s, r.x, y++, r.w, st[i], line[i]);
	return y - r.y;
}
