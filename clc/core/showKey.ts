/** Shows a client-supplied key (or name) in a message without letting it run on: printable ASCII, 64 characters at most. */
export function showKey(key: string): string {
  const clean = key.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}...` : clean;
}
