// @quire/sdk: quire's prompts in TypeScript and JavaScript.
export { Client, VERSION } from "./client.js";
export { PromptCache } from "./prompts.js";
export { QuireError } from "./errors.js";
export { Template, parseTemplate, renderPrompt, missingError, placeholderMessages, MAX_OUTPUT, MAX_DEPTH } from "./render.js";
export { toOpenAIMessages } from "./messages.js";
