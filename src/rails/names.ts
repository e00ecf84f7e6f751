// The rails the service knows (RAIL), by the name QRs and payments record (`rail`).
export const RAIL_NAMES = ['sandbox', 'baneco'] as const;
export type RailName = (typeof RAIL_NAMES)[number];
