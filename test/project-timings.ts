import type { Reporter, TestModule } from 'vitest/node';

/** What one vitest project took: its files, its tests, and when its first file started and its last ended (ms). */
interface ProjectTiming {
  files: number;
  tests: number;
  fileMilliseconds: number;
  firstStart: number;
  lastEnd: number;
}

/**
 * Prints, at the end of a run, a line per vitest project (unit, infrastructure, integration, e2e, browser): its
 * files and tests, its wall-clock span (first file started to last file ended, seconds) and the sum of its files'
 * durations (set-up, import and tests), then the run's whole span and its three longest files: a run's own output
 * states where its time went.
 */
export class ProjectTimings implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly ended = new Map<string, number>();
  private runStart = Date.now();

  onTestRunStart(): void {
    this.runStart = Date.now();
  }

  onTestModuleStart(testModule: TestModule): void {
    this.started.set(testModule.moduleId, Date.now());
  }

  onTestModuleEnd(testModule: TestModule): void {
    this.ended.set(testModule.moduleId, Date.now());
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const projects = new Map<string, ProjectTiming>();
    const files: { file: string; seconds: number }[] = [];
    for (const testModule of testModules) {
      const name = testModule.project.name || 'default';
      const start = this.started.get(testModule.moduleId) ?? this.runStart;
      const end = this.ended.get(testModule.moduleId) ?? Date.now();
      const diagnostic = testModule.diagnostic();
      const duration =
        diagnostic.environmentSetupDuration +
        diagnostic.prepareDuration +
        diagnostic.collectDuration +
        diagnostic.setupDuration +
        diagnostic.duration;
      const timing = projects.get(name) ?? { files: 0, tests: 0, fileMilliseconds: 0, firstStart: start, lastEnd: end };
      timing.files += 1;
      timing.tests += [...testModule.children.allTests()].length;
      timing.fileMilliseconds += duration;
      timing.firstStart = Math.min(timing.firstStart, start);
      timing.lastEnd = Math.max(timing.lastEnd, end);
      projects.set(name, timing);
      files.push({ file: testModule.relativeModuleId, seconds: duration / 1000 });
    }
    const seconds = (milliseconds: number) => (milliseconds / 1000).toFixed(1);
    const lines = ['', 'Time per vitest project (wall span; sum of its files):'];
    const width = Math.max(...[...projects.keys()].map((name) => name.length));
    for (const [name, timing] of [...projects].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(
        `  ${name.padEnd(width)} ${String(timing.files).padStart(4)} files ${String(timing.tests).padStart(5)} tests` +
          `  ${seconds(timing.lastEnd - timing.firstStart).padStart(7)} s; ${seconds(timing.fileMilliseconds).padStart(7)} s`,
      );
    }
    lines.push(`  whole run: ${seconds(Date.now() - this.runStart)} s`);
    const longest = files.sort((a, b) => b.seconds - a.seconds).slice(0, 3);
    lines.push(`  longest files: ${longest.map(({ file, seconds }) => `${file} ${seconds.toFixed(1)} s`).join(', ')}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
