"""The SDK against a real quire (tests/server.py): what an application sees
through the prompt cache and the client."""

import threading
import time
import unittest

from quire import Client, QuireError, to_langchain, to_openai_messages

from .server import Server


class SDK(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server()
        cls.client = Client(cls.srv.url, token=cls.srv.token)
        srv = cls.srv
        srv.api("POST", "/v1/projects", {"name": "Demo", "slug": "demo"})
        srv.publish("demo", "greeting", {"template": "Hello {{name}}, {{day}}!", "model": "gpt-4o", "model_params": {"temperature": 0.2}})
        srv.publish("demo", "style", {"template": "Be brief, {{name}}."})
        srv.publish("demo", "chat", {
            "messages": [
                {"role": "system", "content": "You are {{persona}}. {{> style}}"},
                {"type": "placeholder", "name": "history"},
                {"role": "user", "content": "{{question}}"},
            ],
            "model": "gpt-4o-mini",
            "model_params": {"max_tokens": 200},
        })

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def server_render(self, slug, variables):
        return self.srv.api("POST", f"/v1/projects/demo/prompts/{slug}/render", {"variables": variables})

    def test_render_is_the_servers_answer(self):
        with self.client.prompts() as pc:
            v = {"name": "Ann", "day": "Monday"}
            local = pc.render("demo/greeting", v)
            self.assertEqual(local["rendered"], "Hello Ann, Monday!")
            self.assertEqual(local, self.server_render("greeting", v))
            cv = {"persona": "terse", "question": "why?", "name": "Ann", "history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
            chat = pc.render("demo/chat", cv)
            self.assertEqual(chat, self.server_render("chat", cv))
            self.assertEqual([m["role"] for m in chat["messages"]], ["system", "user", "assistant", "user"])
            self.assertEqual(chat["messages"][0]["content"], "You are terse. Be brief, Ann.")
            self.assertEqual([p["slug"] for p in chat["partials"]], ["style"])
            self.assertEqual(to_openai_messages(chat), {"model": "gpt-4o-mini", "max_tokens": 200, "messages": chat["messages"]})
            self.assertEqual(to_openai_messages(local), {"model": "gpt-4o", "temperature": 0.2, "messages": [{"role": "user", "content": "Hello Ann, Monday!"}]})

    def test_langchain(self):
        chat = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, {"role": "tool", "content": "t"}]}
        try:
            import langchain_core  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "langchain_core"):
                to_langchain(chat)
            # langchain_core cannot be installed here (no package index):
            # the mapping is checked against stand-ins of its four classes.
            import sys
            import types

            class Message:
                def __init__(self, content, role=None):
                    self.content, self.role = content, role

            lc = types.ModuleType("langchain_core")
            lc.messages = types.ModuleType("langchain_core.messages")
            for name in ("SystemMessage", "HumanMessage", "AIMessage", "ChatMessage"):
                setattr(lc.messages, name, type(name, (Message,), {}))
            sys.modules.update({"langchain_core": lc, "langchain_core.messages": lc.messages})
            try:
                msgs = to_langchain(chat)
                text = to_langchain({"rendered": "x"})
            finally:
                del sys.modules["langchain_core"], sys.modules["langchain_core.messages"]
            self.assertEqual([type(m).__name__ for m in msgs], ["SystemMessage", "HumanMessage", "AIMessage", "ChatMessage"])
            self.assertEqual([(m.content, m.role) for m in msgs][-1], ("t", "tool"))
            self.assertEqual([(type(m).__name__, m.content) for m in text], [("HumanMessage", "x")])
            return
        msgs = to_langchain(chat)
        self.assertEqual([m.type for m in msgs], ["system", "human", "ai", "chat"])

    def test_missing_variables_are_the_servers_error(self):
        with self.client.prompts() as pc:
            with self.assertRaises(QuireError) as local:
                pc.render("demo/chat", {"question": "q"})
            with self.assertRaises(QuireError) as remote:
                self.client.post_v1_projects_project_prompts_slug_render("demo", "chat", body={"variables": {"question": "q"}})
            self.assertEqual(remote.exception.status, 422)
            self.assertEqual(local.exception.code, "unprocessable")
            self.assertEqual(local.exception.message, remote.exception.message)
            self.assertEqual(local.exception.details, remote.exception.details)
            self.assertEqual(local.exception.details["missing"], ["persona", "name", "history"])

    def test_cached_reads_make_no_request(self):
        with self.client.prompts(ttl=60) as pc:
            chat_vars = {"persona": "p", "question": "q", "name": "n", "history": []}
            pc.render("demo/chat", chat_vars)
            pc.get("demo/greeting")
            n = self.srv.requests()
            for _ in range(500):
                pc.render("demo/greeting", {"name": "Ann", "day": "Friday"})
                pc.render("demo/chat", chat_vars)
                pc.get("demo/greeting")
            self.assertEqual(self.srv.requests(), n)

    def test_concurrent_first_reads_make_one_request(self):
        with self.client.prompts() as pc:
            n = self.srv.requests()
            got = []
            start = threading.Barrier(20)

            def read():
                start.wait()
                got.append(pc.get("demo/style"))

            threads = [threading.Thread(target=read) for _ in range(20)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(len(got), 20)
            self.assertTrue(all(v is got[0] for v in got))
            self.assertEqual(self.srv.requests(), n + 1)

    def test_revalidation_past_the_ttl_is_a_304(self):
        now = [0.0]
        events = []
        with self.client.prompts(ttl=1, now=lambda: now[0], on_event=lambda k, ev: events.append(ev)) as pc:
            first = pc.get("demo/greeting")
            now[0] = 5
            self.assertIs(pc.get("demo/greeting"), first)  # stale, served at once
            pc.wait()
            self.assertEqual(events, ["miss", "stale_served", "not_modified"])
            self.assertIs(pc.get("demo/greeting"), first)
            self.assertEqual(events[-1], "hit")

    def test_publish_and_label_move_seen_through_events_within_1s(self):
        srv = self.srv
        srv.publish("demo", "news", {"template": "v1 {{x}}"})
        srv.api("PUT", "/v1/projects/demo/prompts/news/labels/staging", {"version": 1})
        with self.client.prompts(ttl=3600, events=True) as pc:
            self.assertEqual(pc.get("demo/news")["version"], 1)
            self.assertEqual(pc.get("demo/news", label="staging")["version"], 1)
            time.sleep(0.3)  # the stream connects
            t0 = time.monotonic()
            srv.publish("demo", "news", {"template": "v2 {{x}}"})
            while pc.get("demo/news")["version"] != 2:
                self.assertLess(time.monotonic() - t0, 1.0, "publish not seen within 1 s")
                time.sleep(0.01)
            self.assertEqual(pc.render("demo/news", {"x": "!"})["rendered"], "v2 !")
            t0 = time.monotonic()
            srv.api("PUT", "/v1/projects/demo/prompts/news/labels/staging", {"version": 2})
            while pc.get("demo/news", label="staging")["version"] != 2:
                self.assertLess(time.monotonic() - t0, 1.0, "label move not seen within 1 s")
                time.sleep(0.01)
            self.assertEqual(pc.get("demo/news", version=1)["template"], "v1 {{x}}")

    def test_typed_errors(self):
        with self.client.prompts() as pc:
            with self.assertRaises(QuireError) as e:
                pc.get("demo/nope")
            self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
            self.assertNotEqual(e.exception.request_id, "")
        bad = Client(self.srv.url, token="ak_not-a-key")
        with self.assertRaises(QuireError) as e:
            bad.get_v1_projects()
        self.assertEqual((e.exception.status, e.exception.code), (401, "unauthorized"))
        self.assertNotIn("ak_not-a-key", str(e.exception) + repr(bad))
        page = self.client.get_v1_projects_project_prompts("demo", limit=2).data
        self.assertEqual(len(page["prompts"]), 2)

    def test_server_killed_stale_if_error_then_fallbacks(self):
        own = Server()
        try:
            c = Client(own.url, token=own.token)
            own.api("POST", "/v1/projects", {"name": "Ops", "slug": "ops"})
            own.publish("ops", "hello", {"template": "Hi {{name}}"})
            now = [0.0]
            stale = []
            with c.prompts(ttl=1, now=lambda: now[0], on_stale=lambda k, err: stale.append((k, err.status))) as pc:
                self.assertEqual(pc.render("ops/hello", {"name": "Ann"})["rendered"], "Hi Ann")
                own.kill()
                now[0] = 5
                self.assertEqual(pc.render("ops/hello", {"name": "Bo"})["rendered"], "Hi Bo")  # stale, revalidating
                pc.wait()
                self.assertEqual(stale, [("ops/hello", 0)])
                self.assertEqual(pc.render("ops/hello", {"name": "Cy"})["rendered"], "Hi Cy")
            # A cold start with the server down: the fallback renders.
            with c.prompts(fallbacks={"ops/hello": "Hello (fallback) {{name}}"}, on_stale=lambda k, err: stale.append((k, "cold"))) as cold:
                out = cold.render("ops/hello", {"name": "Di"})
                self.assertEqual(out["rendered"], "Hello (fallback) Di")
                self.assertEqual(out["version"], 0)
                self.assertEqual(stale[-1], ("ops/hello", "cold"))
                with self.assertRaises(QuireError) as e:
                    cold.get("ops/other")
                self.assertTrue(e.exception.unreachable)
                self.assertEqual(e.exception.status, 0)
        finally:
            own.stop()

    def test_typed_variables(self):
        schema = {"type": "object", "required": ["name", "age"], "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}}
        self.srv.publish("demo", "typed-py", {"template": "{{name}} is {{age}}", "variables_schema": schema})
        self.srv.publish("demo", "patterned-py", {"template": "code {{code}}", "variables_schema": {"properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}})
        with self.client.prompts() as pc:
            self.assertEqual(pc.render("demo/typed-py", {"name": "Ann", "age": 7})["rendered"], "Ann is 7")
            n = self.srv.requests()
            with self.assertRaises(QuireError) as local:
                pc.render("demo/typed-py", {"name": "A", "age": -1})
            self.assertEqual(self.srv.requests(), n, "checked locally")
            with self.assertRaises(QuireError) as remote:
                self.client.post_v1_projects_project_prompts_slug_render("demo", "typed-py", body={"variables": {"name": "A", "age": -1}})
            self.assertEqual(remote.exception.status, 422)
            for attr in ("code", "message", "details"):
                self.assertEqual(getattr(local.exception, attr), getattr(remote.exception, attr))
            self.assertEqual(local.exception.details["errors"], [{"path": "/age", "message": "minimum: got -1, want 0"}])
            # A schema the SDK does not check: the server renders.
            self.assertEqual(pc.render("demo/patterned-py", {"code": "ABC"})["rendered"], "code ABC")
            with self.assertRaises(QuireError) as bad:
                pc.render("demo/patterned-py", {"code": "abc"})
            self.assertEqual((bad.exception.status, bad.exception.details["errors"][0]["path"]), (422, "/code"))

    def test_partial_from_fallback_while_the_server_is_down(self):
        with Client("http://127.0.0.1:9").prompts(fallbacks={"x/main": "Main: {{> part}}", "x/part": "part {{v}}"}) as pc:
            out = pc.render("x/main", {"v": 1})
            self.assertEqual(out["rendered"], "Main: part 1")
            self.assertEqual([p["slug"] for p in out["partials"]], ["part"])

    def test_pinned_and_live_partials(self):
        self.srv.publish("demo", "sig-py", {"template": "v1 {{name}}"})
        self.srv.publish("demo", "sig-py", {"template": "v2 {{name}}"})
        self.srv.publish("demo", "signed-py", {"template": "{{> sig-py@1}} / {{> sig-py}} / {{> sig-py@1}}"})
        with self.client.prompts() as pc:
            local = pc.render("demo/signed-py", {"name": "Ann"})
            self.assertEqual(local["rendered"], "v1 Ann / v2 Ann / v1 Ann")
            self.assertEqual([(p["slug"], p["version"]) for p in local["partials"]], [("sig-py@1", 1), ("sig-py", 2)])
            self.assertEqual(local, self.server_render("signed-py", {"name": "Ann"}))

    def test_non_json_answer_is_bytes(self):
        self.srv.publish("demo", "diffed-py", {"template": "one"})
        self.srv.publish("demo", "diffed-py", {"template": "two"})
        ans = self.client.request("GET", "/v1/projects/{project}/prompts/{slug}/diff", {"project": "demo", "slug": "diffed-py"}, {"from": 1, "to": 2}, headers={"Accept": "text/x-diff"})
        self.assertIsInstance(ans.data, bytes)
        self.assertRegex(ans.data.decode(), r"(?m)^-one$[\s\S]*^\+two$")

    def test_cached_render_is_fast(self):
        from bench.bench_render import GOAL_US, measure

        self.srv.publish("demo", "note", {"template": "Hello {{name}}, here is a short note about {{topic}}."})

        class Alias:  # the benchmark's key, on this server's project
            def __init__(self, pc):
                self.pc = pc

            def render(self, key, variables):
                return self.pc.render("demo/note", variables)

            def get(self, key):
                return self.pc.get("demo/note")

        with self.client.prompts() as pc:
            pc.get("demo/note")
            n = self.srv.requests()
            m = measure(Alias(pc), rounds=3, n=5000, cpu=True)  # the shared machine's load must not fail it
            self.assertLess(m["render"], GOAL_US, f"{m['render']:.2f} µs a render")
            self.assertEqual(self.srv.requests(), n, "no request for cached reads")


if __name__ == "__main__":
    unittest.main()
