/**
 * The CDK app (`npx cdk synth`): one environment-agnostic stack, `MembershipService` (the tables stay in it: a split
 * would only add exports that lock them); REST routes in nested stacks per object module (DESIGN D23), fed by
 * parameters, not exports. cdk-nag AWS Solutions checks run on every synth; acknowledged findings carry their reason
 * next to the resource.
 */
import { createMembershipApp } from '../lib/app.js';

const { app } = createMembershipApp();
app.synth();
