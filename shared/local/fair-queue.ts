import type { PipelineMessage } from '../runtime.js';

/**
 * Ready messages (D24): one FIFO per team and endpoint, taken round robin within `perTeam`/`perEndpoint` in flight
 * ({@link FairQueue.take}, {@link FairQueue.done}), so attempts beyond a cap wait here. A delivery message equal to one
 * waiting or in flight is dropped (it could only be skipped).
 */
export class FairQueue {
  /**
   * Waiting messages (with when each was queued, epoch ms) by team, then by lane; both maps' orders are round-robin
   * orders (a served one moves last).
   */
  private readonly waiting = new Map<string, Map<string, Array<{ message: PipelineMessage; sinceMs: number }>>>();
  /** Messages in flight by team, and by `team lane` for lanes that name an endpoint. */
  private readonly running = new Map<string, number>();
  /** Keys of the delivery messages waiting or in flight. */
  private readonly present = new Set<string>();
  private count = 0;

  /** Messages waiting. */
  get size(): number {
    return this.count;
  }

  /**
   * Queues `message` at `sinceMs` (epoch ms); false (dropped) when the same delivery message is already waiting or in
   * flight.
   */
  push(message: PipelineMessage, sinceMs: number): boolean {
    const key = presenceKey(message);
    if (key) {
      if (this.present.has(key)) return false;
      this.present.add(key);
    }
    let lanes = this.waiting.get(message.team_id);
    if (!lanes)
      this.waiting.set(
        message.team_id,
        (lanes = new Map<string, Array<{ message: PipelineMessage; sinceMs: number }>>()),
      );
    const lane = laneOf(message);
    const queue = lanes.get(lane);
    if (queue) queue.push({ message, sinceMs });
    else lanes.set(lane, [{ message, sinceMs }]);
    this.count++;
    return true;
  }

  /**
   * When the oldest waiting message was queued (epoch ms; each lane is first in, first out, so its head is its oldest),
   * or null.
   */
  oldestSinceMs(): number | null {
    let oldest: number | null = null;
    for (const lanes of this.waiting.values())
      for (const queue of lanes.values()) if (oldest === null || queue[0].sinceMs < oldest) oldest = queue[0].sinceMs;
    return oldest;
  }

  take(perTeam: number, perEndpoint: number): PipelineMessage | undefined {
    for (const [team, lanes] of this.waiting) {
      if ((this.running.get(team) ?? 0) >= perTeam) continue;
      for (const [lane, queue] of lanes) {
        if (lane && (this.running.get(`${team} ${lane}`) ?? 0) >= perEndpoint) continue;
        const { message } = queue.shift()!;
        lanes.delete(lane);
        if (queue.length > 0) lanes.set(lane, queue); // to the back of the team's round
        this.waiting.delete(team);
        if (lanes.size > 0) this.waiting.set(team, lanes); // to the back of the round
        this.count--;
        for (const counter of lane ? [team, `${team} ${lane}`] : [team])
          this.running.set(counter, (this.running.get(counter) ?? 0) + 1);
        return message;
      }
    }
    return undefined;
  }

  done(message: PipelineMessage): void {
    const key = presenceKey(message);
    if (key) this.present.delete(key);
    const lane = laneOf(message);
    for (const counter of lane ? [message.team_id, `${message.team_id} ${lane}`] : [message.team_id]) {
      const left = (this.running.get(counter) ?? 1) - 1;
      if (left > 0) this.running.set(counter, left);
      else this.running.delete(counter);
    }
  }
}

/** The lane of a message: its endpoint, or '' when it names none. */
function laneOf(message: PipelineMessage): string {
  return message.kind === 'replay_batch' ||
    message.kind === 'message_send' ||
    message.kind === 'broadcast_batch' ||
    message.kind === 'import_page' ||
    message.kind === 'access_audit_page' ||
    message.kind === 'access_code_batch'
    ? ''
    : (message.endpoint_id ?? '');
}

/** The identity of a delivery message (kind, delivery, attempt); null for job batches (never dropped). */
function presenceKey(message: PipelineMessage): string | null {
  if (
    message.kind === 'replay_batch' ||
    message.kind === 'broadcast_batch' ||
    message.kind === 'import_page' ||
    message.kind === 'access_audit_page' ||
    message.kind === 'access_code_batch'
  )
    return null;
  if (message.kind === 'message_send') return `${message.kind} ${message.message_id} ${message.attempt}`;
  return `${message.kind} ${message.delivery_id} ${message.attempt}`;
}
