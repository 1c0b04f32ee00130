/**
 * The ManualClock's pending timers: a binary min-heap on (at, seq), so the next due timer is found
 * in O(log n) however many are pending (the simulator runs thousands of hosts, each with timers;
 * sorting the whole list per fired timer made a run quadratic).
 */
export interface HeapTimer {
  readonly at: number;
  readonly seq: number;
}

function before(a: HeapTimer, b: HeapTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export class TimerHeap<T extends HeapTimer> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(t: T): void {
    const a = this.items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(a[i] as T, a[parent] as T)) break;
      [a[i], a[parent]] = [a[parent] as T, a[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && before(a[l] as T, a[m] as T)) m = l;
      if (r < a.length && before(a[r] as T, a[m] as T)) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m] as T, a[i] as T];
      i = m;
    }
    return top;
  }
}
