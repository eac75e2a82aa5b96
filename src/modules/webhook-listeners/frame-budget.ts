/**
 * What the client of a listener's stream may send. The HTTP rate limit counts a stream's opening, not the
 * frames sent on it: one stream sending 1-byte text frames as fast as it could (516,000 in 4 s) held the event
 * loop, and another tenant's GET waited 6 s (hostile-tenant probe). The protocol asks the client for one frame
 * per frame it is sent to answer (a `result` per attempt, a pong per ping); it may send SPARE_FRAMES more (a
 * result too late for its attempt, a ping of its own) over the stream's life. Past that the stream is closed
 * with 1008.
 */
import type { WebSocket } from 'ws';

export const SPARE_FRAMES = 100;
/** RFC 6455's "policy violation". */
const POLICY_VIOLATION = 1008;

export class FrameBudget {
  private left = SPARE_FRAMES;

  /** The server sent a frame for the client to answer. */
  owe(): void {
    this.left += 1;
  }

  /**
   * The client sent a frame: whether to read it. The first past the budget closes the stream; one more while
   * the close is under way (a client that does not stop) ends the connection at once.
   */
  admit(socket: WebSocket): boolean {
    this.left -= 1;
    if (this.left >= 0) return true;
    if (socket.readyState === socket.OPEN)
      socket.close(POLICY_VIOLATION, 'more messages than the stream was asked for');
    else socket.terminate();
    return false;
  }
}
