import { planPlacement } from '../cc/migration/placement.js';
import { tightScenario } from '../bench/planScenarios.js';
for (const [hosts, n] of [[1000, 50], [10000, 50], [1000, 200]] as const) {
  let full = 0, placed = 0, total = 0, worst = 0;
  const runs = 20;
  for (let s = 1; s <= runs; s++) {
    const sc = tightScenario(s, hosts, n);
    const t = performance.now();
    const r = planPlacement(sc.nodes, sc.drain, { hosts: [], allow: true });
    worst = Math.max(worst, performance.now() - t);
    if (r.unplaced.length === 0) full++;
    placed += r.placements.length; total += sc.drain.length;
  }
  console.log(`${hosts} hosts, ${n} instances: complete ${full}/${runs}, share ${(placed / total).toFixed(3)}, worst ${worst.toFixed(0)} ms`);
}
