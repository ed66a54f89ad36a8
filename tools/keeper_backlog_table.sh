#!/usr/bin/env bash
# The VALIDATION.md table "a 30-minute Keeper backlog at the defaults":
# the production baseline with keeper_backlog from 1 min for 30 min at each
# capacity factor, 3 seeds, run over the backlog only (32 min + 5 min drain)
# so that the latency percentiles are those of the backlog. "dashboard max" is the
# largest of the 15 s readings (keeper_in_flight_sampled_max).
#   tools/keeper_backlog_table.sh [PIPESIM]
set -euo pipefail
PIPESIM="${1:-build/pipesim}"
echo "| capacity_factor | Keeper serves | peak in flight | mean in flight | dashboard max | Keeper p99 | insert p99 | inserts/s | sessions expired | client timeouts | redeliveries | dedup hits | duplicate rows |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for cf in 0.25 0.05 0.02 0.01 0.005 0.003; do
  "$PIPESIM" run --seeds 3 --set run.duration=32m --set run.drain=5m \
    --set "faults=[{\"kind\":\"keeper_backlog\",\"at\":\"1m\",\"duration\":\"30m\",\"capacity_factor\":$cf}]" \
    --format json | /usr/bin/python3 -c "
import json, sys
m = json.load(sys.stdin)['metrics']
g = lambda k: m[k]['mean']
print('| %s | %s/s | %.0f | %.0f | %.0f | %.0f ms | %.0f ms | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |' % (
    '$cf', format(int(40000 * float('$cf')), ','), g('keeper_peak_in_flight'), g('keeper_mean_in_flight'),
    g('keeper_in_flight_sampled_max'), g('keeper_latency_p99_ms'), g('insert_latency_p99_ms'), g('inserts_per_s'),
    g('keeper_sessions_expired'),
    m['insert_answers']['client_timeout']['mean'], g('redeliveries'), g('dedup_hits'), g('duplicate_rows')))
"
done
