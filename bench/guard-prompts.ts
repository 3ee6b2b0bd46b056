// The text the guard's benchmarks scan: lines of code, logs, prose and JSON (a
// git SHA, a UUID, a timestamp, "S3": near misses every detector must pass
// over), with a planted AWS key id every `plantEvery` lines.
const LINES = [
  'export async function loadUser(id: string): Promise<User> { const row = await db.query("select * from users where id = $1", [id]); return row; }',
  '2026-11-28T10:12:33.101Z INFO request id=9fceb02d0ae598e9 path=/v1/chat/completions status=200 ms=412 user=7c1e2b4a-0d2f-4c1e-9a0b-5e6f7a8b9c0d',
  'The customer asked whether the invoice from Tuesday was paid, and whether the gateway forwards each request to the model in order.',
  '{"event":"deploy","sha":"3f786850e387550fdab836ed7e6dc881de23001b","at":1764324753,"region":"eu-west-1","service":"S3"}',
];
const PLANT = 'AWS_ACCESS_KEY_ID=AKIAQ3EGRTWXZ7PLMN4K';

/** `chars` characters of the mix, a planted key after every `plantEvery` lines. */
export function guardPrompt(chars: number, plantEvery = 24): string {
  let text = '';
  for (let i = 0; text.length < chars; i++) {
    text += `${LINES[i % LINES.length] as string}\n`;
    if (i % plantEvery === plantEvery - 1) text += `${PLANT}\n`;
  }
  return text.slice(0, chars);
}
