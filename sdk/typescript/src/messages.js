// Helpers that hand a rendered prompt to a model API.

/**
 * A rendered prompt (the answer of render(), local or the server's) as an
 * OpenAI chat completions request: {model, messages, ...model_params}. A
 * chat prompt's messages are passed as they are; a text prompt becomes
 * one user message.
 */
export function toOpenAIMessages(rendered) {
  const messages = rendered.messages !== undefined && rendered.messages !== null
    ? rendered.messages.map((m) => ({ role: m.role, content: m.content }))
    : [{ role: "user", content: rendered.rendered }];
  const out = { ...(rendered.model_params ?? {}), messages };
  if (rendered.model) out.model = rendered.model;
  return out;
}
