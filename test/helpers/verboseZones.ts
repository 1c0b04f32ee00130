/** Reads DescribeAvailabilityZones verbose's items back into figures: `type zone` → `available/max`. */

/** Items as xml2js gives them: a zone's own item, then its `|- vm types` header and `|- <type>` rows. */
export function verboseFigures(items: readonly { readonly zoneName: string; readonly zoneState: string }[]): Map<string, string> {
  const out = new Map<string, string>();
  let zone = '';
  for (const z of items) {
    if (!z.zoneName.startsWith('|- ')) zone = z.zoneName;
    else if (z.zoneName !== '|- vm types') out.set(`${z.zoneName.slice(3)} ${zone}`, (/^(\d+) \/ (\d+)/.exec(z.zoneState) ?? []).slice(1).map(Number).join('/'));
  }
  return out;
}
