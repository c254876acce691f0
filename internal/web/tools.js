// tools.js says in a few words what a tool call is doing or did, from its
// arguments while it runs and from its result once it answered.
//
// A finished call's chip names what the call touched ("#3 Buy groceries",
// "2 pending tasks"), not what became of it: the reply under it says that
// in its own words, and a chip that said "Added task 3: Buy groceries"
// above a reply saying "Added task 3: Buy groceries." said it twice. The
// sentence (finished) is for where no reply tells it: the changes listed
// under an error.

const done = {
  created: "Added",
  completed: "Completed",
  deleted: "Deleted",
  updated: "Updated",
};

// running describes a call whose result has not come yet.
export function running(tool, args) {
  const a = args && typeof args === "object" ? args : {};
  switch (tool) {
    case "add_task":
      return a.title ? `Adding “${a.title}”…` : "Adding a task…";
    case "list_tasks":
      return `Looking at ${statusWord(a.status)}tasks…`;
    case "complete_task":
      return `Completing task ${a.task_id ?? ""}…`;
    case "delete_task":
      return `Deleting task ${a.task_id ?? ""}…`;
    case "update_task":
      return `Updating task ${a.task_id ?? ""}…`;
    default:
      return "Working…";
  }
}

// finished describes a call from its tool, arguments, result and error
// state, as a sentence such as "Added task 3: Buy groceries".
export function finished(tool, args, result, isError) {
  if (isError) {
    const why = result && typeof result === "object" && result.error ? result.error : "the tool gave no reason";
    return `Failed: ${why}`;
  }
  if (waits(result)) return "Waiting for your approval";
  if (result && typeof result === "object") {
    if (Array.isArray(result.tasks)) {
      const n = result.tasks.length;
      const status = args && typeof args === "object" ? args.status : "";
      return `Found ${n} ${statusWord(status)}task${n === 1 ? "" : "s"}`;
    }
    if (changes(result)) {
      return `${done[result.status]} task ${result.task_id}: ${result.title ?? ""}`.trim();
    }
  }
  return "Done";
}

// chip is what a finished call's chip says after the tool's name.
export function chip(tool, args, result, isError) {
  if (isError || waits(result)) return finished(tool, args, result, isError);
  if (result && typeof result === "object") {
    if (Array.isArray(result.tasks)) {
      const n = result.tasks.length;
      const status = args && typeof args === "object" ? args.status : "";
      return `${n} ${statusWord(status)}task${n === 1 ? "" : "s"}`;
    }
    if (changes(result)) return `#${result.task_id} ${result.title ?? ""}`.trim();
  }
  return "done";
}

// changes reports whether a call's result says that it changed a task.
export function changes(result) {
  return !!result && typeof result === "object" && !!done[result.status] && result.task_id !== undefined;
}

function statusWord(status) {
  return status === "pending" || status === "completed" ? `${status} ` : "";
}

// waits reports whether a call's result says that it did not run: it
// waits for the person's approval.
export function waits(result) {
  return !!result && typeof result === "object" && result.status === "awaiting_approval";
}
