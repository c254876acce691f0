package grammar

// The fixed replies of the table: help, and what the tools cannot do. The
// executor words every other reply.

// HelpText is the reply to anything the parser does not understand.
const HelpText = "I can keep your to-do list. Try saying:\n" +
	"- \"Add a task to buy groceries\"\n" +
	"- \"Show me all my tasks\" or \"What's pending?\"\n" +
	"- \"Mark task " + AnyTask + " as complete\"\n" +
	"- \"Delete task " + AnyTask + "\", or \"delete\" and a word from its title\n" +
	"- \"Change task " + AnyTask + " to 'Call mom tonight'\""

const welcomeText = "You're welcome! Anything else for your list?"

const outOfScopeText = "I only manage your to-do list, so I can't help with that. " +
	"I can add, list, complete, change or delete your tasks — try \"What's pending?\""

const noUndoText = "I can't undo a change yet: a deleted task can't be brought back, and I can't reopen a completed one from a message yet. " +
	"I can add a task again, or change one — try \"Change task " + AnyTask + " to 'Call mom tonight'\"."

// NoReopenText answers a request to reopen a task, which this model does
// not read yet (update_task can, for a language model or an MCP client).
const NoReopenText = "I can't reopen a task from a message yet. " +
	"I can add it again as a new task — try \"Add call mom tonight\"."

// NoDatesText answers a request for a due date or a priority, which this
// model does not read from a message yet (add_task and update_task take
// them, for a language model or an MCP client).
const NoDatesText = "I can't set due dates or priorities from a message yet. You can put it in the title or the " +
	"description instead — try \"Change task " + AnyTask + " to 'Pay rent by Friday'\"."

const noRemindText = "I can't send reminders, or set due dates from a message yet. You can put the time in the " +
	"title instead — try \"Change task " + AnyTask + " to 'Call mom at 9 tomorrow'\"."

const noOrderText = "I can't change the order of your tasks: they stay in the order they were added. " +
	"You can mark one as complete, change it, or delete it."

// AnyTask stands for a task number in an example until the executor knows
// which task to name. No message or title holds it: text with a NUL is
// refused before it is stored.
const AnyTask = "\x00"
