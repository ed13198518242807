/**
 * The CDK app (`npx cdk synth` runs it through `cdk.json`).
 *
 * One stack, `MembershipService`, rather than a data stack plus an API stack: the fan-out's stream
 * event source, every Lambda's grants and the outputs all reference the tables, so a split would
 * only add CloudFormation exports that lock the tables in place, while the tables are already
 * protected where it matters (retained on delete, logical ids pinned to the shared table
 * definition, point-in-time recovery). Only the REST routes and their Lambdas move into nested stacks,
 * one per object module (DESIGN D23), so no template nears CloudFormation's resource limit; they get
 * what they use from the root stack as nested-stack parameters, not exports. The stack is
 * environment-agnostic: no account or region, no lookups, so synthesis runs offline. cdk-nag's AWS Solutions checks run on every synth;
 * acknowledged findings carry their reason next to the resource they concern (see `lib/`).
 */
import { createMembershipApp } from '../lib/app.js';

const { app } = createMembershipApp();
app.synth();
