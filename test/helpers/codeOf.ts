/** The coded error a promise rejects with ('no error' when it resolves): one line per expectation. */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? `uncoded: ${String(e)}`;
  }
  return 'no error';
}
