/** A bounded set that forgets its oldest entries: memory of recent events for a long-lived host. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly limit: number) {}

  add(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    for (const oldest of this.ids) {
      if (this.ids.size <= this.limit) break;
      this.ids.delete(oldest);
    }
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }
}
