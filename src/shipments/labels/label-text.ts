import type { LabelAddress, LabelInput, LabelPackage } from './label-input.js';

// The words on a label, shared by the PDF and ZPL renderers so both formats say the same thing.

/** Control and format characters (newlines, tabs, bidi overrides) would break a one-line field. */
export function clean(text: string | null | undefined): string {
  return (text ?? '').replace(/[\s\p{Cc}\p{Cf}]+/gu, ' ').trim();
}

export interface AddressLines {
  name: string;
  street: string;
  locality: string;
  region: string;
  phone: string;
}

export function addressLines(a: LabelAddress): AddressLines {
  const floor = clean(a.floor);
  const apartment = clean(a.apartment);
  const street = [
    clean(`${clean(a.street)} ${clean(a.street_number)}`),
    floor !== '' ? `Floor ${floor}` : '',
    apartment !== '' ? `Apt ${apartment}` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');
  const phone = clean(a.phone);
  return {
    name: clean(a.name),
    street,
    locality: [clean(a.zipcode), clean(a.city)].filter((s) => s !== '').join(' '),
    region: [clean(a.state), clean(a.country)].filter((s) => s !== '').join(', '),
    phone: phone !== '' ? `Tel. ${phone}` : '',
  };
}

export function formatWeight(grams: number): string {
  if (grams < 1000) return `${grams} g`;
  return `${Number((grams / 1000).toFixed(2))} kg`;
}

export function formatDimensions(p: LabelPackage): string {
  return `${p.length_cm} x ${p.width_cm} x ${p.height_cm} cm`;
}

export function packageCounter(index: number, total: number): string {
  return `${index + 1}/${total}`;
}

export function serviceLine(input: LabelInput): string {
  return clean(input.service_type_name);
}

/** YYYY-MM-DD in UTC, so the label does not depend on the server's time zone. */
export function formatDate(isoDateTime: string): string {
  const date = new Date(isoDateTime);
  return Number.isNaN(date.getTime()) ? clean(isoDateTime) : date.toISOString().slice(0, 10);
}

export function footerLine(input: LabelInput): string {
  return `Shipment ${input.shipment_id} | ${formatDate(input.created_at)} | ${clean(input.ulid)}`;
}
