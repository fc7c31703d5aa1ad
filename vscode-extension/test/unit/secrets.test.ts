import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { defaultSecretName, isSecretName, parseSecretRequest, planMove, secretRef, storageKey, withProviderSecretsCapability, withRunPromptsCapability } from "../../src/logic/secrets";

describe("provider secrets", () => {
  it("knows which provider settings are credentials", () => {
    for (const name of ["OPENAI_API_KEY", "API_KEY", "deepseek_api_key", "HF_TOKEN", "CLIENT_SECRET", "DB_PASSWORD"]) assert.ok(isSecretName(name), name);
    for (const name of ["OPENAI_BASE_URL", "MODEL", "PROVIDER", "TIMEOUT", "API"]) assert.ok(!isSecretName(name), name);
  });

  it("names the provider as the runtime looks keys up (P_API_KEY, else API_KEY)", () => {
    assert.deepEqual(secretRef("OPENAI_API_KEY"), { provider: "openai", name: "OPENAI_API_KEY" });
    assert.deepEqual(secretRef("API_KEY"), { provider: "", name: "API_KEY" });
    assert.equal(defaultSecretName("openrouter"), "OPENROUTER_API_KEY");
    assert.equal(defaultSecretName("my-llm"), "MY_LLM_API_KEY");
    assert.equal(storageKey({ provider: "openai", name: "OPENAI_API_KEY" }), "nexa.providerSecret/openai/OPENAI_API_KEY");
  });

  it("plans the move: secrets out, the rest stays", () => {
    assert.deepEqual(planMove({ OPENAI_API_KEY: "sk-1", OPENAI_BASE_URL: "http://x", API_KEY: "" }), {
      secrets: [{ provider: "openai", name: "OPENAI_API_KEY", value: "sk-1" }],
      keep: { OPENAI_BASE_URL: "http://x", API_KEY: "" },
    });
    assert.deepEqual(planMove({ API_KEY: "k" }), { secrets: [{ provider: "", name: "API_KEY", value: "k" }], keep: undefined });
    assert.deepEqual(planMove(undefined), { secrets: [], keep: undefined });
  });

  it("declares experimental.nexa.providerSecrets and keeps what else is declared", () => {
    assert.deepEqual(withProviderSecretsCapability(undefined), { nexa: { providerSecrets: true } });
    assert.deepEqual(withProviderSecretsCapability({ other: 1, nexa: { runPrompts: true } }), { other: 1, nexa: { runPrompts: true, providerSecrets: true } });
    assert.deepEqual(withProviderSecretsCapability({ nexa: "x" }), { nexa: { providerSecrets: true } });
    assert.deepEqual(withRunPromptsCapability(withProviderSecretsCapability({ other: 1 })), { other: 1, nexa: { providerSecrets: true, runPrompts: true } });
  });

  it("reads the server's request {provider, name}", () => {
    assert.deepEqual(parseSecretRequest({ provider: "OpenAI", name: "openai_api_key" }), { provider: "openai", name: "OPENAI_API_KEY" });
    assert.equal(parseSecretRequest({ provider: "openai" }), undefined);
    assert.equal(parseSecretRequest(null), undefined);
  });
});
