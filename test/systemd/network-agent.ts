// One process in the container's network namespace that does the test's
// networking there: HTTP requests to the gateway on the container's loopback,
// and a fake OpenAI-compatible upstream on 127.0.0.1:8000 that reports what
// it got. The host's Node runs this file (nsenter -n: the host's file
// system, the container's network) once for the whole test, instead of a
// Node process per request.
//
// Commands come on stdin and answers go to stdout, a JSON object a line,
// each answer with its command's id; the upstream's reports have no id.
// A streamed upstream answer sends its first chunk and then holds the rest
// until a 'release' command, so a test can act while a stream is surely open.
import { createServer, type ServerResponse } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { within } from '../support/eventually.ts';

export interface HttpRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface UpstreamRequest {
  method: string;
  url: string;
  authorization: string | null;
  stream: boolean;
}

type Command =
  | ({ id: number; op: 'fetch' | 'stream'; timeoutMs: number } & HttpRequest)
  | { id: number; op: 'upstream' }
  | { id: number; op: 'release' };

type Answer = { id?: number } & Record<string, unknown>;

const UPSTREAM_PORT = 8000;

function chunkEvent(delta: Record<string, string>, finish: string | null = null): string {
  const chunk = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The agent itself: `node network-agent.js`, in the container's network namespace. */
function runAgent(): void {
  const send = (answer: Answer): boolean => process.stdout.write(`${JSON.stringify(answer)}\n`);
  const held: Array<() => void> = [];

  const fakeUpstream = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (text: string) => (body += text));
    req.on('end', () => {
      const request = JSON.parse(body || '{}') as { model?: string; stream?: boolean };
      send({ upstreamRequest: { method: req.method, url: req.url, authorization: req.headers.authorization ?? null, stream: request.stream === true } });
      if (request.stream === true) return streamAnswer(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 1700000000,
          model: request.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'an answer from the fake upstream' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
        }),
      );
    });
  });
  const streamAnswer = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunkEvent({ role: 'assistant', content: 'first words, ' }));
    held.push(() => {
      res.write(chunkEvent({ content: 'last words' }));
      res.write(chunkEvent({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  };

  const request = async (command: Extract<Command, { op: 'fetch' | 'stream' }>): Promise<void> => {
    const { id } = command;
    try {
      const answer = await fetch(command.url, { method: command.method ?? 'GET', headers: command.headers, body: command.body, signal: AbortSignal.timeout(command.timeoutMs) });
      if (command.op === 'fetch') {
        send({ id, status: answer.status, body: await answer.text() });
        return;
      }
      send({ id, status: answer.status });
      const decoder = new TextDecoder();
      for await (const chunk of answer.body ?? []) send({ id, chunk: decoder.decode(chunk as Uint8Array, { stream: true }) });
      send({ id, end: true });
    } catch (err) {
      const failure = err as { cause?: { code?: string }; message?: string };
      send({ id, error: String(failure.cause?.code ?? failure.message ?? err) });
    }
  };

  let pending = '';
  process.stdin.setEncoding('utf8').on('data', (text: string) => {
    pending += text;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const command = JSON.parse(pending.slice(0, end)) as Command;
      pending = pending.slice(end + 1);
      if (command.op === 'upstream') fakeUpstream.listen(UPSTREAM_PORT, '127.0.0.1', () => send({ id: command.id, listening: true }));
      else if (command.op === 'release') send({ id: command.id, released: held.splice(0).map((go) => go()).length });
      else void request(command);
    }
  });
  // The test is done, or gone: so is this.
  process.stdin.on('end', () => process.exit(0));
}

/** The test's side: sends commands to the agent and matches its answers. */
export class NetworkAgent {
  readonly upstreamRequests: UpstreamRequest[] = [];
  private readonly child: ChildProcess;
  private readonly listeners = new Map<number, (answer: Answer) => void>();
  private nextId = 1;
  private stderr = '';
  private exited: string | undefined;

  /** `spawn` starts this file's agent: Container.spawnInNetwork does. */
  constructor(spawnAgent: (script: string) => ChildProcess) {
    this.child = spawnAgent(THIS_FILE);
    let pending = '';
    this.child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      pending += text;
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const answer = JSON.parse(pending.slice(0, end)) as Answer;
        pending = pending.slice(end + 1);
        if (answer['upstreamRequest'] !== undefined) this.upstreamRequests.push(answer['upstreamRequest'] as UpstreamRequest);
        else if (answer.id !== undefined) this.listeners.get(answer.id)?.(answer);
      }
    });
    this.child.stderr?.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
    this.child.on('exit', (code, signal) => {
      this.exited = `the network agent exited (${code ?? signal}): ${this.stderr}`;
      for (const listener of this.listeners.values()) listener({ error: this.exited });
    });
  }

  private command(op: Command['op'], fields: Record<string, unknown>, onAnswer: (answer: Answer) => boolean): Promise<void> {
    if (this.exited !== undefined) return Promise.reject(new Error(this.exited));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.listeners.set(id, (answer) => {
        if (answer['error'] !== undefined && answer.id === undefined) return reject(new Error(String(answer['error'])));
        if (!onAnswer(answer)) return;
        this.listeners.delete(id);
        resolve();
      });
      this.child.stdin?.write(`${JSON.stringify({ id, op, ...fields })}\n`);
    });
  }

  /** One request, its whole answer; `error` (a code such as ECONNREFUSED) when there is none. */
  async fetch(request: HttpRequest, timeoutMs: number): Promise<{ status?: number; body?: string; error?: string }> {
    let result: Answer = {};
    await within(
      this.command('fetch', { ...request, timeoutMs }, (answer) => ((result = answer), true)),
      `${request.method ?? 'GET'} ${request.url} through the network agent`,
      timeoutMs + 5_000,
    );
    return { status: result['status'] as number | undefined, body: result['body'] as string | undefined, error: result['error'] as string | undefined };
  }

  /** A streamed request: `received` grows as chunks come; `done` settles at its end (true) or failure (its error). */
  stream(request: HttpRequest, timeoutMs: number): { received: () => string; done: Promise<true | string> } {
    let text = '';
    let outcome: true | string = 'no answer';
    const done = this.command('stream', { ...request, timeoutMs }, (answer) => {
      if (typeof answer['chunk'] === 'string') text += answer['chunk'];
      if (answer['end'] === true) outcome = true;
      else if (answer['error'] !== undefined) outcome = String(answer['error']);
      else return false;
      return true;
    }).then(
      () => outcome,
      (err: Error) => err.message,
    );
    return { received: () => text, done };
  }

  /** Starts the fake upstream on the container's 127.0.0.1:8000. */
  startUpstream(): Promise<void> {
    return within(this.command('upstream', {}, () => true), 'the fake upstream listening', 30_000);
  }

  /** Lets the held upstream streams finish; resolves with how many there were. */
  async release(): Promise<number> {
    let released = 0;
    await within(this.command('release', {}, (answer) => ((released = answer['released'] as number), true)), 'the upstream streams released', 30_000);
    return released;
  }

  stop(): void {
    this.child.stdin?.end();
  }
}

const THIS_FILE = fileURLToPath(import.meta.url);
if (process.argv[1] !== undefined && existsSync(process.argv[1]) && realpathSync(process.argv[1]) === realpathSync(THIS_FILE)) runAgent();
