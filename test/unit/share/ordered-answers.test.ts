// A share connection's answers leave in the order its requests came, whatever order they are ready in.
import { describe, expect, it } from 'vitest';
import { OrderedAnswers } from '../../../src/field/modbus/ordered-answers.js';

describe('OrderedAnswers', () => {
  it('holds an answer ready early until the earlier ones have left, and counts what it holds', () => {
    const sent: string[] = [];
    const order = new OrderedAnswers((frame) => sent.push(frame.toString()));
    const [a, b, c, d] = [order.slot(), order.slot(), order.slot(), order.slot()];
    c!(Buffer.from('c'));
    b!(Buffer.from('bb'));
    expect(sent).toEqual([]);
    expect(order.heldBytes).toBe(3);
    a!(Buffer.from('a'));
    expect(sent).toEqual(['a', 'bb', 'c']);
    expect(order.heldBytes).toBe(0);
    d!(Buffer.from('d'));
    expect(sent).toEqual(['a', 'bb', 'c', 'd']);
  });
});
