/**
 * A call's own DynamoDB requests sent again alone, back to back: the price of its round trips without the service
 * around them. One call is captured — every request it sends, in order, and each item its writes change as it was
 * before the call — then, sample after sample, those items are put back as they were (untimed) and the requests are
 * sent again one after another, each timed. The same requests on the same items answer as they did in the call,
 * conditions included; afterwards the items are put back as the call (and the pipeline after it) left them.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_DEFINITION } from '../shared/store/table-definition.js';
import { summarize } from './measuring.js';
import type { RawRequestLatency } from './store-baseline.js';

/** The document client's `send`, as the capture wraps it. */
interface Sender {
  send(command: unknown): Promise<unknown>;
}

/** One command as sent: its class name (`PutCommand`, ...) and input. */
interface SentCommand {
  constructor: { name: string };
  input: Record<string, unknown>;
}

type Key = Record<string, unknown>;
type Item = Record<string, unknown>;

/** An item a captured call wrote: its table and key, and its content before the call (undefined: it did not exist). */
interface WrittenItem {
  table: string;
  key: Key;
  before: Item | undefined;
}

/** One call's requests in the order it sent them, and the items they write. */
interface CapturedCall {
  commands: SentCommand[];
  written: WrittenItem[];
}

/** What sending a call's own requests again costs. */
export interface OwnRequestsRaw {
  /** The requests of the captured call. */
  requests: number;
  /** The sum of each request's p50 over the samples (ms). */
  ms: number;
  /**
   * Each request's command name (`TransactWriteCommand`, ...), item count (transactions) and p50 (ms), in the order the
   * call sent them.
   */
  byRequest: Array<{ command: string; items?: number; p50: number }>;
  samples: number;
  /** Requests answered with an error on replay: each means the call's state was not reproduced. */
  failures: number;
}

/**
 * {@link OwnRequestsRaw} with the p50 (ms) of the calls made between its rounds and the raw price of each request kind
 * timed in the same rounds (bench/measure-calls.ts).
 */
export interface PairedOwnRequests extends OwnRequestsRaw {
  pairedCallP50: number;
  pairedRawPrices: RawRequestLatency;
}

const keyOf = (item: Item): Key => ({
  [TABLE_DEFINITION.partitionKey.name]: item[TABLE_DEFINITION.partitionKey.name],
  [TABLE_DEFINITION.sortKey.name]: item[TABLE_DEFINITION.sortKey.name],
});

/** The table and key of every item `command` writes (none for a read). */
function writtenKeys(command: SentCommand): Array<{ table: string; key: Key }> {
  const input = command.input as {
    TableName?: string;
    Item?: Item;
    Key?: Key;
    TransactItems?: Array<Record<string, { TableName: string; Item?: Item; Key?: Key }>>;
    RequestItems?: Record<string, Array<{ PutRequest?: { Item: Item }; DeleteRequest?: { Key: Key } }>>;
  };
  switch (command.constructor.name) {
    case 'PutCommand':
      return [{ table: input.TableName!, key: keyOf(input.Item!) }];
    case 'UpdateCommand':
    case 'DeleteCommand':
      return [{ table: input.TableName!, key: input.Key! }];
    case 'TransactWriteCommand':
      return (input.TransactItems ?? []).flatMap((entry) => {
        const write = entry.Put ?? entry.Update ?? entry.Delete;
        return write ? [{ table: write.TableName, key: write.Item ? keyOf(write.Item) : write.Key! }] : [];
      });
    case 'BatchWriteCommand':
      return Object.entries(input.RequestItems ?? {}).flatMap(([table, requests]) =>
        requests.map((request) => ({
          table,
          key: request.PutRequest ? keyOf(request.PutRequest.Item) : request.DeleteRequest!.Key,
        })),
      );
    default:
      return [];
  }
}

/** One item's identity, whatever order its key's attributes were written in. */
const itemId = (table: string, key: Key) => JSON.stringify([table, Object.values(keyOf(key))]);

/**
 * Runs `call` with `document`'s `send` wrapped: records each command, and before a write reads (strongly consistent)
 * each item it changes that the call has not changed yet. Restores `send` afterwards, whatever `call` did.
 */
export async function captureCall(document: Sender, call: () => Promise<unknown>): Promise<CapturedCall> {
  const commands: SentCommand[] = [];
  const written = new Map<string, WrittenItem>();
  const original = Object.getOwnPropertyDescriptor(document, 'send');
  const send = document.send.bind(document);
  document.send = async (command: unknown) => {
    const sent = command as SentCommand;
    commands.push(sent);
    for (const { table, key } of writtenKeys(sent)) {
      const id = itemId(table, key);
      if (written.has(id)) continue;
      const read = (await send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))) as {
        Item?: Item;
      };
      written.set(id, { table, key, before: read.Item });
    }
    return send(command);
  };
  try {
    await call();
  } finally {
    if (original) Object.defineProperty(document, 'send', original);
    else delete (document as Partial<Sender>).send;
  }
  return { commands, written: [...written.values()] };
}

/** Puts each item back as `contentOf` gives it (deleting an item that should not exist). */
async function putBack(document: Sender, written: WrittenItem[], contentOf: (item: WrittenItem) => Item | undefined) {
  for (const item of written) {
    const content = contentOf(item);
    await document.send(
      content
        ? new PutCommand({ TableName: item.table, Item: content })
        : new DeleteCommand({ TableName: item.table, Key: item.key }),
    );
  }
}

/**
 * Sends `captured`'s requests again `samples` times (after 20 unmeasured rounds), each round on the items as they were
 * before the call, running `between` after each measured round; then puts the items back as they are now. Returns the
 * sum of the requests' p50s (ms).
 */
export async function replayOwnRequests(
  document: Sender,
  captured: CapturedCall,
  samples: number,
  between: () => Promise<void> = async () => {},
): Promise<OwnRequestsRaw> {
  const after = new Map<WrittenItem, Item | undefined>();
  for (const item of captured.written) {
    const read = (await document.send(
      new GetCommand({ TableName: item.table, Key: item.key, ConsistentRead: true }),
    )) as { Item?: Item };
    after.set(item, read.Item);
  }
  const warmup = 20;
  const durations = captured.commands.map((): number[] => []);
  let failures = 0;
  for (let round = 0; round < warmup + samples; round++) {
    await putBack(document, captured.written, (item) => item.before);
    for (const [index, command] of captured.commands.entries()) {
      const started = performance.now();
      const failed = await document.send(command).then(
        () => false,
        () => true,
      );
      if (round < warmup) continue;
      durations[index].push(performance.now() - started);
      if (failed) failures++;
    }
    if (round >= warmup) await between();
  }
  await putBack(document, captured.written, (item) => after.get(item));
  return {
    requests: captured.commands.length,
    ms: durations.reduce((total, series) => total + summarize(series).p50, 0),
    byRequest: captured.commands.map((command, index) => ({
      command: command.constructor.name,
      ...(Array.isArray(command.input.TransactItems) ? { items: command.input.TransactItems.length } : {}),
      p50: summarize(durations[index]).p50,
    })),
    samples,
    failures,
  };
}
