/**
 * When projects are audited on their own (DESIGN D34): daily, from a day after the project's creation on. Apart from
 * the schedule's handler so project creation and the audit routes' bundles carry only this.
 */
import { DAY_MS } from '../../clock.js';

/** How often a project is audited on the schedule: daily (MILLISECONDS). */
export const ACCESS_AUDIT_INTERVAL_MS = DAY_MS;
