/** Paths of the messages' public pages (DESIGN D32): definitions only, so `lib/` may import them. */

/** The path of the unsubscribe page, under the service's public base URL. */
export const UNSUBSCRIBE_PATH = '/messages/unsubscribe';
