/** A Map that counts its changes, so a reader can cache what it derived from it until the next one. */
export class CountingMap<K, V> extends Map<K, V> {
  changes = 0;

  override set(key: K, value: V): this {
    this.changes++;
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    this.changes++;
    return super.delete(key);
  }

  override clear(): void {
    this.changes++;
    super.clear();
  }
}
