#!/usr/bin/env node
// The `svc` command. This file is not built: npm links a package's bin when it installs it, and in this
// repository's workspace that happens before the root's prepare script has built dist/, so the bin must
// already exist then. It only loads the built command.
import '../dist/cli/bin.js';
