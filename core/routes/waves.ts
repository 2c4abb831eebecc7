/**
 * Waves: the topological layers of a route's nodes. A node's wave is one more than the latest wave among its
 * dependencies (wave 0 depends on nothing), so every node in a wave can run beside the others in it. Within a wave
 * the file's order is kept. A cycle is returned as the path that closes it, `a → b → a` (each depends on the next).
 */
export interface WaveNode {
  id: string;
  dependsOn: readonly string[];
}

export type Waves = { ok: true; waves: string[][]; waveOf: Map<string, number> } | { ok: false; cycle: string[] };

export function waves(nodes: readonly WaveNode[]): Waves {
  const deps = new Map(nodes.map((n) => [n.id, n.dependsOn.filter((d) => d !== n.id)]));
  const waveOf = new Map<string, number>();
  const onPath: string[] = [];
  const visiting = new Set<string>();
  let cycle: string[] | null = null;
  const visit = (id: string): number => {
    const known = waveOf.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) {
      cycle = [...onPath.slice(onPath.indexOf(id)), id];
      return -1;
    }
    visiting.add(id);
    onPath.push(id);
    let wave = 0;
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d)) continue; // an unknown dependency is the file parser's refusal, not a cycle
      const w = visit(d);
      if (cycle) return -1;
      wave = Math.max(wave, w + 1);
    }
    onPath.pop();
    visiting.delete(id);
    waveOf.set(id, wave);
    return wave;
  };
  for (const n of nodes) {
    visit(n.id);
    if (cycle) return { ok: false, cycle };
  }
  const layers: string[][] = [];
  for (const n of nodes) (layers[waveOf.get(n.id)!] ??= []).push(n.id);
  return { ok: true, waves: layers, waveOf };
}
