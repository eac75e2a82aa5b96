/**
 * What the console takes as seen in the inbox (console/seen.js, a browser module without imports, loaded here as
 * it is): the ids shown, so that a message placed below one already shown (its create committed later) is still
 * new; the first listing all seen; a bounded memory whose floor rises over what it forgets; earlier consoles'
 * newest-shown mark read as a floor.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

interface Message {
  messageId: string;
  createdAt: string;
}
interface Seen {
  shown: [string, string][];
  floor: string | null;
}
interface SeenModule {
  KEEP: number;
  isSeen(seen: Seen | undefined, message: Message): boolean;
  remember(seen: Seen | undefined, messages: Message[], full: boolean): Seen;
  parseSeen(value: string | null): Seen | undefined;
  unseenCount(seen: Seen | undefined, messages: Message[], full: boolean): { count: number; more: boolean };
}

let seen: SeenModule;
beforeAll(async () => {
  seen = await import(pathToFileURL(path.resolve('console/seen.js')).href);
});

/** Message `n`, created `n` seconds into the day. */
const message = (n: number): Message => ({
  messageId: `msg_${n}`,
  createdAt: new Date(Date.UTC(2026, 10, 28, 0, 0, n)).toISOString(),
});
/** Newest first, as the inbox lists them. */
const listing = (...numbers: number[]) => numbers.map(message);

describe("the console's seen messages", () => {
  it('takes the first listing as seen, and what arrives after it as new', () => {
    const start = seen.remember(undefined, listing(3, 2, 1), false);
    expect(listing(3, 2, 1).every((each) => seen.isSeen(start, each))).toBe(true);
    expect(seen.isSeen(start, message(4))).toBe(false);
    expect(seen.unseenCount(start, listing(4, 3, 2), true)).toEqual({ count: 1, more: false });
    // An empty inbox is a start too: the first message is new.
    expect(seen.isSeen(seen.remember(undefined, [], false), message(1))).toBe(false);
  });

  it('keeps a message placed below one already shown new until it is shown itself', () => {
    // 5 was created (and placed) before 6, but committed after 6 was listed.
    const shown = seen.remember(seen.remember(undefined, listing(2, 1), false), listing(6, 2, 1), false);
    expect(seen.isSeen(shown, message(5))).toBe(false);
    expect(seen.unseenCount(shown, listing(6, 5, 2, 1), false)).toEqual({ count: 1, more: false });
    expect(seen.isSeen(seen.remember(shown, listing(6, 5, 2, 1), false), message(5))).toBe(true);
  });

  it('takes what is older than a full first listing as seen, but not what is older than a short one', () => {
    expect(seen.isSeen(seen.remember(undefined, listing(9, 8), true), message(3))).toBe(true);
    expect(seen.isSeen(seen.remember(undefined, listing(9, 8), false), message(3))).toBe(false);
  });

  it('answers the same state when nothing new was shown', () => {
    const state = seen.remember(undefined, listing(2, 1), false);
    expect(seen.remember(state, listing(2, 1), false)).toBe(state);
  });

  it('remembers KEEP ids, the newest, and counts what it forgot as seen through the floor', () => {
    let state = seen.remember(undefined, [], false);
    const all = Array.from({ length: seen.KEEP + 10 }, (_, index) => message(index + 1));
    for (let end = 10; end <= all.length; end += 10) state = seen.remember(state, all.slice(end - 10, end), false);
    expect(state.shown).toHaveLength(seen.KEEP);
    expect(state.shown[0]![0]).toBe(`msg_${all.length}`);
    expect(state.floor).toBe(message(10).createdAt);
    expect(all.every((each) => seen.isSeen(state, each))).toBe(true);
    // Only what was created before the forgotten ones is lost: placed between the remembered, it is still new.
    const between = new Date(Date.UTC(2026, 10, 28, 0, 0, 10, 500)).toISOString();
    expect(seen.isSeen(state, { messageId: 'msg_late', createdAt: between })).toBe(false);
    expect(seen.isSeen(state, { messageId: 'msg_early', createdAt: message(9).createdAt })).toBe(true);
  });

  it('says when every message of a full listing is new (there may be more)', () => {
    const state = seen.remember(undefined, listing(1), false);
    expect(seen.unseenCount(state, listing(4, 3, 2), true)).toEqual({ count: 3, more: true });
    expect(seen.unseenCount(state, listing(4, 3, 2), false)).toEqual({ count: 3, more: false });
  });

  it("reads what it kept, and an earlier console's newest-shown mark as a floor", () => {
    const state = seen.remember(undefined, listing(2, 1), true);
    expect(seen.parseSeen(JSON.stringify(state))).toEqual(state);
    const earlier = seen.parseSeen(JSON.stringify({ messageId: 'msg_2', createdAt: message(2).createdAt }));
    expect(earlier).toEqual({ shown: [['msg_2', message(2).createdAt]], floor: message(2).createdAt });
    expect(seen.isSeen(earlier, message(1))).toBe(true);
    expect(seen.isSeen(earlier, message(3))).toBe(false);
    for (const junk of [null, 'not json', '{"shown":"x"}', '[]']) expect(seen.parseSeen(junk)).toBeUndefined();
  });
});
