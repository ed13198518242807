/**
 * Currency minor units (interface: amounts are integers in the currency's minor unit): the ISO 4217
 * exponent of `currencyExponent`, exact conversion of a typed major-unit amount with `toMinorUnits`, and
 * `formatMinorUnits` back, and `formatPrice` for people (the join pages: the currency's symbol and main unit).
 * The dashboard's plan form and lists and the public pages use these, never a table of their own.
 */
import { describe, expect, it } from 'vitest';
import {
  Currency,
  currencyExponent,
  formatMinorUnits,
  formatPrice,
  minorToMajor,
  toMinorUnits,
} from '../../shared/schemas/common.js';

describe('currency minor units', () => {
  it('uses the ISO 4217 exponent, not ICU display rounding', () => {
    expect(currencyExponent('USD')).toBe(2);
    expect(currencyExponent('eur')).toBe(2);
    expect(currencyExponent('JPY')).toBe(0);
    expect(currencyExponent('KRW')).toBe(0);
    expect(currencyExponent('KWD')).toBe(3);
    expect(currencyExponent('IQD')).toBe(3); // ICU shows 0 decimals
    expect(currencyExponent('HUF')).toBe(2); // ICU shows 0 decimals
    expect(currencyExponent('IDR')).toBe(2); // ICU shows 0 decimals
  });

  it('names only currencies the service accepts', () => {
    for (const code of ['BIF', 'JPY', 'KWD', 'BHD', 'TND']) expect(Currency.safeParse(code).success, code).toBe(true);
  });

  it('converts a typed amount exactly, with no floating-point error', () => {
    expect(toMinorUnits('9.99', 'USD')).toBe(999);
    expect(toMinorUnits('0.07', 'USD')).toBe(7);
    expect(toMinorUnits('19.9', 'EUR')).toBe(1990);
    expect(toMinorUnits('1,5', 'EUR')).toBe(150);
    expect(toMinorUnits('12', 'EUR')).toBe(1200);
    expect(toMinorUnits(' 500 ', 'JPY')).toBe(500);
    expect(toMinorUnits('1.5', 'KWD')).toBe(1500);
    expect(toMinorUnits('0.1', 'USD')! + toMinorUnits('0.2', 'USD')!).toBe(30);
  });

  it('refuses text that is not an amount of the currency', () => {
    for (const [text, currency] of [
      ['0.5', 'JPY'],
      ['1.234', 'USD'],
      ['-1', 'USD'],
      ['', 'USD'],
      ['1e3', 'USD'],
      ['abc', 'EUR'],
      ['1.', 'JPY'],
    ] as const) {
      expect(toMinorUnits(text, currency), `${text} ${currency}`).toBeNull();
    }
  });

  it('writes minor units in the major unit', () => {
    expect(formatMinorUnits(999, 'USD')).toBe('9.99 USD');
    expect(formatMinorUnits(5, 'eur')).toBe('0.05 EUR');
    expect(formatMinorUnits(0, 'EUR')).toBe('0.00 EUR');
    expect(formatMinorUnits(500, 'JPY')).toBe('500 JPY');
    expect(formatMinorUnits(1500, 'KWD')).toBe('1.500 KWD');
    expect(minorToMajor(1990, 'EUR')).toBe('19.90');
    expect(toMinorUnits(minorToMajor(12_345_678, 'USD'), 'USD')).toBe(12_345_678);
  });

  it('shows a price in the main unit with the currency’s symbol and its exponent’s decimals', () => {
    expect(formatPrice(900, 'EUR')).toBe('€9.00');
    expect(formatPrice(123456, 'usd')).toBe('$1,234.56');
    expect(formatPrice(500, 'JPY')).toBe('¥500');
    expect(formatPrice(1500, 'KWD')).toMatch(/^KWD\s1\.500$/);
    expect(formatPrice(1000, 'HUF')).toMatch(/^HUF\s10\.00$/);
  });
});
