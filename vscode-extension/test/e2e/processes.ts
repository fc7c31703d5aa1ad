/**
 * Processes the real-editor suite starts, stopped by pid: each one is
 * spawned as the leader of its own process group, and stopping it signals
 * the leader, every descendant found under /proc, and the group.
 */

import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Parent pid of every live process, read from /proc/<pid>/stat. */
function parentPids(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may contain spaces and parentheses.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(entry), Number(rest[1]));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** The pid and all its live descendants. */
export function processTree(root: number): number[] {
  const parents = parentPids();
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parents) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid);
  }
  return tree.filter((pid) => pid === root || parents.has(pid));
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0; it no longer runs.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Every pid the suite started or saw below one of its processes. */
const known = new Set<number>();

/**
 * Stops a process and everything below it: SIGTERM, then SIGKILL for what is
 * left after `graceMs`. Returns the pids of that tree still alive afterwards (none, normally).
 */
export async function stopTree(root: number, graceMs = 5000): Promise<number[]> {
  const pids = processTree(root);
  for (const pid of pids) known.add(pid);
  for (const pid of pids) signal(pid, "SIGTERM");
  signal(-root, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && pids.some(isAlive)) await sleep(100);
  const late = processTree(root).filter((pid) => !pids.includes(pid));
  for (const pid of late) known.add(pid);
  const all = [...pids, ...late];
  for (const pid of all) if (isAlive(pid)) signal(pid, "SIGKILL");
  signal(-root, "SIGKILL");
  // SIGKILL is delivered at once, but the kernel may take a moment to end the process.
  const killDeadline = Date.now() + 3000;
  while (Date.now() < killDeadline && all.some(isAlive)) await sleep(100);
  return all.filter(isAlive);
}

/** Pids the suite started (with their descendants when they were stopped) that still run. */
export function survivors(): number[] {
  return [...known].filter(isAlive);
}

/** Spawns a process group leader and remembers its pid; it is killed when this process exits. */
export function spawnGroup(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  if (child.pid !== undefined) {
    known.add(child.pid);
    const pid = child.pid;
    process.on("exit", () => {
      for (const p of processTree(pid)) signal(p, "SIGKILL");
      signal(-pid, "SIGKILL");
    });
  }
  return child;
}

/** `pid: command line` of each pid, for failure messages. */
export function describePids(pids: readonly number[]): string[] {
  return pids.map((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()} [${stat}]`;
    } catch {
      return `${pid}: (no command line; ${isAlive(pid) ? "still running" : "ended meanwhile"})`;
    }
  });
}

/** Adds a pid started by a library (the browser) to the ones checked at the end. */
export function remember(pid: number): void {
  known.add(pid);
  process.on("exit", () => {
    for (const p of processTree(pid)) signal(p, "SIGKILL");
  });
}
