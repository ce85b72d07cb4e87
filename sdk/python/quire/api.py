"""The API, one method per operation of the OpenAPI document. Generated
by gen_api.py from internal/apiclient/openapi.json (API version
2.2.0): do not edit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from .client import Answer


class API:
    """Every operation of the API; Client supplies request()."""

    def request(self, method: str, path: str, path_params: Optional[dict[str, Any]] = None, query: Optional[dict[str, Any]] = None, body: Any = None, headers: Optional[dict[str, str]] = None) -> Answer:
        raise NotImplementedError

    def delete_mcp(self) -> Answer:
        """DELETE /mcp

        Model Context Protocol: end the session named by Mcp-Session-Id
        """
        return self.request('DELETE', '/mcp', {}, {}, None)

    def delete_v1_api_keys_keyID(self, key_id: str) -> Answer:
        """DELETE /v1/api-keys/{keyID}

        Delete an API key
        """
        return self.request('DELETE', '/v1/api-keys/{keyID}', {'keyID': key_id}, {}, None)

    def delete_v1_auth_session(self) -> Answer:
        """DELETE /v1/auth/session

        Log out: revoke the calling session
        """
        return self.request('DELETE', '/v1/auth/session', {}, {}, None)

    def delete_v1_auth_sessions_sessionID(self, session_id: str) -> Answer:
        """DELETE /v1/auth/sessions/{sessionID}

        Revoke a session
        """
        return self.request('DELETE', '/v1/auth/sessions/{sessionID}', {'sessionID': session_id}, {}, None)

    def delete_v1_projects_project(self, project: str) -> Answer:
        """DELETE /v1/projects/{project}

        Delete a project with its skills and prompts
        """
        return self.request('DELETE', '/v1/projects/{project}', {'project': project}, {}, None)

    def delete_v1_projects_project_members_userID(self, project: str, user_id: str) -> Answer:
        """DELETE /v1/projects/{project}/members/{userID}

        Remove a member; 409 for the last owner
        """
        return self.request('DELETE', '/v1/projects/{project}/members/{userID}', {'project': project, 'userID': user_id}, {}, None)

    def delete_v1_projects_project_prompts_slug(self, project: str, slug: str) -> Answer:
        """DELETE /v1/projects/{project}/prompts/{slug}

        Delete a prompt and its repository
        """
        return self.request('DELETE', '/v1/projects/{project}/prompts/{slug}', {'project': project, 'slug': slug}, {}, None)

    def delete_v1_projects_project_prompts_slug_labels_name(self, project: str, slug: str, name: str, *, body: Any = None) -> Answer:
        """DELETE /v1/projects/{project}/prompts/{slug}/labels/{name}

        Remove a label; a protected label only by a project owner's override with a reason (409 label_protected otherwise), kept in its history
        """
        return self.request('DELETE', '/v1/projects/{project}/prompts/{slug}/labels/{name}', {'project': project, 'slug': slug, 'name': name}, {}, body)

    def delete_v1_projects_project_prompts_slug_payloads_payloadID(self, project: str, slug: str, payload_id: str) -> Answer:
        """DELETE /v1/projects/{project}/prompts/{slug}/payloads/{payloadID}

        Delete a payload
        """
        return self.request('DELETE', '/v1/projects/{project}/prompts/{slug}/payloads/{payloadID}', {'project': project, 'slug': slug, 'payloadID': payload_id}, {}, None)

    def delete_v1_projects_project_prompts_slug_versions_version(self, project: str, slug: str, version: int) -> Answer:
        """DELETE /v1/projects/{project}/prompts/{slug}/versions/{version}

        Delete a draft
        """
        return self.request('DELETE', '/v1/projects/{project}/prompts/{slug}/versions/{version}', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def delete_v1_projects_project_skills_slug(self, project: str, slug: str) -> Answer:
        """DELETE /v1/projects/{project}/skills/{slug}

        Delete a skill and its repository
        """
        return self.request('DELETE', '/v1/projects/{project}/skills/{slug}', {'project': project, 'slug': slug}, {}, None)

    def delete_v1_projects_project_skills_slug_labels_name(self, project: str, slug: str, name: str, *, body: Any = None) -> Answer:
        """DELETE /v1/projects/{project}/skills/{slug}/labels/{name}

        Remove a label; a protected label only by a project owner's override with a reason (409 label_protected otherwise), kept in its history
        """
        return self.request('DELETE', '/v1/projects/{project}/skills/{slug}/labels/{name}', {'project': project, 'slug': slug, 'name': name}, {}, body)

    def delete_v1_projects_project_skills_slug_versions_version(self, project: str, slug: str, version: int) -> Answer:
        """DELETE /v1/projects/{project}/skills/{slug}/versions/{version}

        Delete a draft
        """
        return self.request('DELETE', '/v1/projects/{project}/skills/{slug}/versions/{version}', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def delete_v1_projects_project_skills_slug_versions_version_files_file_path(self, project: str, slug: str, version: int, file_path: str, *, if_match: Optional[str] = None) -> Answer:
        """DELETE /v1/projects/{project}/skills/{slug}/versions/{version}/files/{file_path}

        Delete a file of a draft (a commit); honours If-Match
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('DELETE', '/v1/projects/{project}/skills/{slug}/versions/{version}/files/{file_path}', {'project': project, 'slug': slug, 'version': version, 'file_path': file_path}, {}, None, headers)

    def delete_v1_projects_project_webhooks_webhookID(self, project: str, webhook_id: str) -> Answer:
        """DELETE /v1/projects/{project}/webhooks/{webhookID}

        Delete a webhook and its delivery log
        """
        return self.request('DELETE', '/v1/projects/{project}/webhooks/{webhookID}', {'project': project, 'webhookID': webhook_id}, {}, None)

    def delete_v1_prompts_id(self, id: str) -> Answer:
        """DELETE /v1/prompts/{id}

        Delete a prompt and its repository
        """
        return self.request('DELETE', '/v1/prompts/{id}', {'id': id}, {}, None)

    def delete_v1_prompts_id_labels_name(self, id: str, name: str, *, body: Any = None) -> Answer:
        """DELETE /v1/prompts/{id}/labels/{name}

        Remove a label; a protected label only by a project owner's override with a reason (409 label_protected otherwise), kept in its history
        """
        return self.request('DELETE', '/v1/prompts/{id}/labels/{name}', {'id': id, 'name': name}, {}, body)

    def delete_v1_prompts_id_payloads_payloadID(self, id: str, payload_id: str) -> Answer:
        """DELETE /v1/prompts/{id}/payloads/{payloadID}

        Delete a payload
        """
        return self.request('DELETE', '/v1/prompts/{id}/payloads/{payloadID}', {'id': id, 'payloadID': payload_id}, {}, None)

    def delete_v1_prompts_id_versions_version(self, id: str, version: int) -> Answer:
        """DELETE /v1/prompts/{id}/versions/{version}

        Delete a draft
        """
        return self.request('DELETE', '/v1/prompts/{id}/versions/{version}', {'id': id, 'version': version}, {}, None)

    def delete_v1_skills_id(self, id: str) -> Answer:
        """DELETE /v1/skills/{id}

        Delete a skill and its repository
        """
        return self.request('DELETE', '/v1/skills/{id}', {'id': id}, {}, None)

    def delete_v1_skills_id_labels_name(self, id: str, name: str, *, body: Any = None) -> Answer:
        """DELETE /v1/skills/{id}/labels/{name}

        Remove a label; a protected label only by a project owner's override with a reason (409 label_protected otherwise), kept in its history
        """
        return self.request('DELETE', '/v1/skills/{id}/labels/{name}', {'id': id, 'name': name}, {}, body)

    def delete_v1_skills_id_versions_version(self, id: str, version: int) -> Answer:
        """DELETE /v1/skills/{id}/versions/{version}

        Delete a draft
        """
        return self.request('DELETE', '/v1/skills/{id}/versions/{version}', {'id': id, 'version': version}, {}, None)

    def delete_v1_skills_id_versions_version_files_file_path(self, id: str, version: int, file_path: str, *, if_match: Optional[str] = None) -> Answer:
        """DELETE /v1/skills/{id}/versions/{version}/files/{file_path}

        Delete a file of a draft (a commit); honours If-Match
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('DELETE', '/v1/skills/{id}/versions/{version}/files/{file_path}', {'id': id, 'version': version, 'file_path': file_path}, {}, None, headers)

    def delete_v1_users_userID(self, user_id: str) -> Answer:
        """DELETE /v1/users/{userID}

        Delete a user, the user's keys and sessions (admin); 409 for oneself, the last admin, or the last owner of a project
        """
        return self.request('DELETE', '/v1/users/{userID}', {'userID': user_id}, {}, None)

    def get__well_known_agent_skills_index_json(self, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /.well-known/agent-skills/index.json

        Agent Skills discovery index (RFC v0.2.0 as published: $schema, and per skill name, type skill-md or archive, description, url, digest of the artifact): the live version of every skill the caller can read whose slug is an Agent Skills name; where two projects share a slug the older project's skill is listed. ETag; anonymous answers are public for 60 s with Access-Control-Allow-Origin: *
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/.well-known/agent-skills/index.json', {}, {}, None, headers)

    def get__well_known_agent_skills_name_path(self, name: str, path: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /.well-known/agent-skills/{name}/{path}

        A file of a skill listed in the discovery index
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/.well-known/agent-skills/{name}/{path}', {'name': name, 'path': path}, {}, None, headers)

    def get__well_known_oauth_authorization_server(self) -> Answer:
        """GET /.well-known/oauth-authorization-server

        OAuth authorization server metadata (RFC 8414): endpoints, PKCE S256, public clients, Client ID Metadata Documents; public
        """
        return self.request('GET', '/.well-known/oauth-authorization-server', {}, {}, None)

    def get__well_known_oauth_protected_resource(self) -> Answer:
        """GET /.well-known/oauth-protected-resource

        OAuth protected resource metadata of /mcp (RFC 9728): the resource, its authorization server, bearer methods and scopes; public
        """
        return self.request('GET', '/.well-known/oauth-protected-resource', {}, {}, None)

    def get__well_known_oauth_protected_resource_mcp(self) -> Answer:
        """GET /.well-known/oauth-protected-resource/mcp

        OAuth protected resource metadata of /mcp at the RFC 9728 path for the resource /mcp (the same document)
        """
        return self.request('GET', '/.well-known/oauth-protected-resource/mcp', {}, {}, None)

    def get__well_known_skills_index_json(self, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /.well-known/skills/index.json

        The same skills in the RFC's v0.1 form, for installers that ask this path: per skill name, description and files (paths); files are served under /.well-known/skills/{name}/
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/.well-known/skills/index.json', {}, {}, None, headers)

    def get__well_known_skills_name_path(self, name: str, path: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /.well-known/skills/{name}/{path}

        A file of a skill listed in the v0.1 discovery index
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/.well-known/skills/{name}/{path}', {'name': name, 'path': path}, {}, None, headers)

    def get_git_path(self, path: str) -> Answer:
        """GET /git/{path}

        Ref advertisement for git clone, fetch and push (info/refs?service=…); Basic auth with a token as password, or Bearer
        """
        return self.request('GET', '/git/{path}', {'path': path}, {}, None)

    def get_healthz(self) -> Answer:
        """GET /healthz

        The process answers
        """
        return self.request('GET', '/healthz', {}, {}, None)

    def get_mcp(self) -> Answer:
        """GET /mcp

        Model Context Protocol: the session's server-sent event stream (Mcp-Session-Id)
        """
        return self.request('GET', '/mcp', {}, {}, None)

    def get_openapi_json(self) -> Answer:
        """GET /openapi.json

        This document
        """
        return self.request('GET', '/openapi.json', {}, {}, None)

    def get_readyz(self) -> Answer:
        """GET /readyz

        Dependencies are up (data root writable, Redis reachable); 503 with the reason otherwise
        """
        return self.request('GET', '/readyz', {}, {}, None)

    def get_v1_api_keys(self, *, all: Optional[bool] = None) -> Answer:
        """GET /v1/api-keys

        The caller's API keys (all of them for an admin with all=true)
        """
        return self.request('GET', '/v1/api-keys', {}, {'all': all}, None)

    def get_v1_api_keys_keyID(self, key_id: str) -> Answer:
        """GET /v1/api-keys/{keyID}

        An API key, with last_used_at
        """
        return self.request('GET', '/v1/api-keys/{keyID}', {'keyID': key_id}, {}, None)

    def get_v1_auth_me(self) -> Answer:
        """GET /v1/auth/me

        The caller: user, and the session or API key used
        """
        return self.request('GET', '/v1/auth/me', {}, {}, None)

    def get_v1_auth_sessions(self, *, user_id: Optional[str] = None) -> Answer:
        """GET /v1/auth/sessions

        The caller's live sessions (an admin may ask for another user's)
        """
        return self.request('GET', '/v1/auth/sessions', {}, {'user_id': user_id}, None)

    def get_v1_projects(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects

        Projects the caller can see
        """
        return self.request('GET', '/v1/projects', {}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project(self, project: str) -> Answer:
        """GET /v1/projects/{project}

        A project (id or slug)
        """
        return self.request('GET', '/v1/projects/{project}', {'project': project}, {}, None)

    def get_v1_projects_project__well_known_agent_skills_index_json(self, project: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/.well-known/agent-skills/index.json

        One project's discovery index where installers given the project's URL (/v1/projects/{p}) look for it
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/.well-known/agent-skills/index.json', {'project': project}, {}, None, headers)

    def get_v1_projects_project__well_known_agent_skills_name_path(self, project: str, name: str, path: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/.well-known/agent-skills/{name}/{path}

        A file of a skill of that index
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/.well-known/agent-skills/{name}/{path}', {'project': project, 'name': name, 'path': path}, {}, None, headers)

    def get_v1_projects_project__well_known_skills_index_json(self, project: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/.well-known/skills/index.json

        One project's skills in the v0.1 form, where v0.1 installers given the project's URL look
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/.well-known/skills/index.json', {'project': project}, {}, None, headers)

    def get_v1_projects_project__well_known_skills_name_path(self, project: str, name: str, path: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/.well-known/skills/{name}/{path}

        A file of a skill of that v0.1 index
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/.well-known/skills/{name}/{path}', {'project': project, 'name': name, 'path': path}, {}, None, headers)

    def get_v1_projects_project_activity(self, project: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/activity

        Changes to the project, its skills and prompts, newest first
        """
        return self.request('GET', '/v1/projects/{project}/activity', {'project': project}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_agent_skills_index_json(self, project: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/agent-skills/index.json

        One project's discovery index
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/agent-skills/index.json', {'project': project}, {}, None, headers)

    def get_v1_projects_project_agent_skills_name_path(self, project: str, name: str, path: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/agent-skills/{name}/{path}

        A file of a skill of one project's discovery index
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/agent-skills/{name}/{path}', {'project': project, 'name': name, 'path': path}, {}, None, headers)

    def get_v1_projects_project_events(self, project: str, *, after: Optional[str] = None, limit: Optional[int] = None, types: Optional[str] = None, assets: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/events

        The project's events: a Server-Sent Events stream (text/event-stream; Last-Event-ID resumes), or with Accept: application/json or ?after= / ?limit=, {"events": [...]} ascending after `after`. Filters: types, assets (comma-separated). Read access
        """
        return self.request('GET', '/v1/projects/{project}/events', {'project': project}, {'after': after, 'limit': limit, 'types': types, 'assets': assets}, None)

    def get_v1_projects_project_members(self, project: str) -> Answer:
        """GET /v1/projects/{project}/members

        A project's members
        """
        return self.request('GET', '/v1/projects/{project}/members', {'project': project}, {}, None)

    def get_v1_projects_project_prompts(self, project: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts

        A project's prompts
        """
        return self.request('GET', '/v1/projects/{project}/prompts', {'project': project}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_prompts_slug(self, project: str, slug: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}

        A prompt (id or slug)
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}', {'project': project, 'slug': slug}, {}, None)

    def get_v1_projects_project_prompts_slug_dependents(self, project: str, slug: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/dependents

        The prompts of the same project whose live version, labelled versions or drafts include this one ({{> slug}} or {{> slug@N}}), directly or through other prompts
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/dependents', {'project': project, 'slug': slug}, {}, None)

    def get_v1_projects_project_prompts_slug_diff(self, project: str, slug: str, *, from_: Optional[int] = None, to: Optional[int] = None, format: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/diff

        Unified diff between two versions
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/diff', {'project': project, 'slug': slug}, {'from': from_, 'to': to, 'format': format}, None)

    def get_v1_projects_project_prompts_slug_history(self, project: str, slug: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/history

        A prompt's changes, newest first
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/history', {'project': project, 'slug': slug}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_prompts_slug_labels(self, project: str, slug: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/labels

        The labels: named pointers to published versions besides live
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/labels', {'project': project, 'slug': slug}, {}, None)

    def get_v1_projects_project_prompts_slug_labels_name_history(self, project: str, slug: str, name: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/labels/{name}/history

        Every move of a label, newest first, with who and when
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/labels/{name}/history', {'project': project, 'slug': slug, 'name': name}, {}, None)

    def get_v1_projects_project_prompts_slug_live(self, project: str, slug: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/live

        The live version, cached, and its files (path, size, sha256); ETag is its commit and If-None-Match answers 304; 404 when nothing is live
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/live', {'project': project, 'slug': slug}, {}, None, headers)

    def get_v1_projects_project_prompts_slug_payloads(self, project: str, slug: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/payloads

        A prompt's payloads
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/payloads', {'project': project, 'slug': slug}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_prompts_slug_payloads_payloadID(self, project: str, slug: str, payload_id: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/payloads/{payloadID}

        A payload
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/payloads/{payloadID}', {'project': project, 'slug': slug, 'payloadID': payload_id}, {}, None)

    def get_v1_projects_project_prompts_slug_reviews(self, project: str, slug: str, *, state: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/reviews

        List reviews, by number
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/reviews', {'project': project, 'slug': slug}, {'state': state, 'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_prompts_slug_reviews_number(self, project: str, slug: str, number: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/reviews/{number}

        A review with its files (against the base), comments, verdicts and mergeable
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/reviews/{number}', {'project': project, 'slug': slug, 'number': number}, {}, None)

    def get_v1_projects_project_prompts_slug_usage(self, project: str, slug: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/usage

        Render counts and last use of each version of a prompt
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/usage', {'project': project, 'slug': slug}, {}, None)

    def get_v1_projects_project_prompts_slug_versions(self, project: str, slug: str, *, limit: Optional[int] = None, cursor: Optional[str] = None, state: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/versions

        A prompt's versions, oldest first
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/versions', {'project': project, 'slug': slug}, {'limit': limit, 'cursor': cursor, 'state': state}, None)

    def get_v1_projects_project_prompts_slug_versions_version(self, project: str, slug: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/versions/{version}

        A version; ETag is its commit
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/versions/{version}', {'project': project, 'slug': slug, 'version': version}, {}, None, headers)

    def get_v1_projects_project_prompts_slug_versions_version_evaluations(self, project: str, slug: str, version: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations

        A version's evaluations, newest first, without their cases
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations', {'project': project, 'slug': slug, 'version': version}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_prompts_slug_versions_version_evaluations_evaluationID(self, project: str, slug: str, version: str, evaluation_id: str) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations/{evaluationID}

        An evaluation: its state, counts (cases, passed, failed, errored, changed) and usage, and its cases done, each with the head's output and assertions and the other version's
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations/{evaluationID}', {'project': project, 'slug': slug, 'version': version, 'evaluationID': evaluation_id}, {}, None)

    def get_v1_projects_project_prompts_slug_versions_version_variables(self, project: str, slug: str, version: int) -> Answer:
        """GET /v1/projects/{project}/prompts/{slug}/versions/{version}/variables

        The variables a version's template uses, and its variables_schema (null when none)
        """
        return self.request('GET', '/v1/projects/{project}/prompts/{slug}/versions/{version}/variables', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def get_v1_projects_project_skills(self, project: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills

        A project's skills
        """
        return self.request('GET', '/v1/projects/{project}/skills', {'project': project}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_skills_slug(self, project: str, slug: str) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}

        A skill (id or slug)
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}', {'project': project, 'slug': slug}, {}, None)

    def get_v1_projects_project_skills_slug_diff(self, project: str, slug: str, *, from_: Optional[int] = None, to: Optional[int] = None, format: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/diff

        Unified diff between two versions
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/diff', {'project': project, 'slug': slug}, {'from': from_, 'to': to, 'format': format}, None)

    def get_v1_projects_project_skills_slug_history(self, project: str, slug: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/history

        A skill's changes, newest first: commits, publish and archive tags, deletions and promotions
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/history', {'project': project, 'slug': slug}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_skills_slug_labels(self, project: str, slug: str) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/labels

        The labels: named pointers to published versions besides live
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/labels', {'project': project, 'slug': slug}, {}, None)

    def get_v1_projects_project_skills_slug_labels_name_history(self, project: str, slug: str, name: str) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/labels/{name}/history

        Every move of a label, newest first, with who and when
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/labels/{name}/history', {'project': project, 'slug': slug, 'name': name}, {}, None)

    def get_v1_projects_project_skills_slug_live(self, project: str, slug: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/live

        The live version and its files (path, size, sha256); ETag is its commit and If-None-Match answers 304; 404 when nothing is live
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/live', {'project': project, 'slug': slug}, {}, None, headers)

    def get_v1_projects_project_skills_slug_reviews(self, project: str, slug: str, *, state: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/reviews

        List reviews, by number
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/reviews', {'project': project, 'slug': slug}, {'state': state, 'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_skills_slug_reviews_number(self, project: str, slug: str, number: str) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/reviews/{number}

        A review with its files (against the base), comments, verdicts and mergeable
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/reviews/{number}', {'project': project, 'slug': slug, 'number': number}, {}, None)

    def get_v1_projects_project_skills_slug_versions(self, project: str, slug: str, *, limit: Optional[int] = None, cursor: Optional[str] = None, state: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/versions

        A skill's versions, oldest first
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/versions', {'project': project, 'slug': slug}, {'limit': limit, 'cursor': cursor, 'state': state}, None)

    def get_v1_projects_project_skills_slug_versions_version(self, project: str, slug: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/versions/{version}

        A version; ETag is its commit
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/versions/{version}', {'project': project, 'slug': slug, 'version': version}, {}, None, headers)

    def get_v1_projects_project_skills_slug_versions_version_archive_tar_gz(self, project: str, slug: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/versions/{version}/archive.tar.gz

        The same as a deterministic tar.gz (the discovery index's package)
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/versions/{version}/archive.tar.gz', {'project': project, 'slug': slug, 'version': version}, {}, None, headers)

    def get_v1_projects_project_skills_slug_versions_version_archive_zip(self, project: str, slug: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/versions/{version}/archive.zip

        A deterministic zip of the version ({version}: a number, "live" or a label name): files at the root sorted by path, each with the commit's time and mode 0644 or 0755; ETag "sha256:<hex>" of the bytes and Repr-Digest. Anonymous callers: published versions of public projects
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/versions/{version}/archive.zip', {'project': project, 'slug': slug, 'version': version}, {}, None, headers)

    def get_v1_projects_project_skills_slug_versions_version_download(self, project: str, slug: str, version: int, *, format: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/versions/{version}/download

        A zip of the version, its files under a folder named for the slug
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/versions/{version}/download', {'project': project, 'slug': slug, 'version': version}, {'format': format}, None)

    def get_v1_projects_project_skills_slug_versions_version_files(self, project: str, slug: str, version: int, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/versions/{version}/files

        A version's files
        """
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/versions/{version}/files', {'project': project, 'slug': slug, 'version': version}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_projects_project_skills_slug_versions_version_files_file_path(self, project: str, slug: str, version: int, file_path: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/skills/{slug}/versions/{version}/files/{file_path}

        A file's raw bytes; ETag is its blob id. Sandboxed (Content-Security-Policy: sandbox, nosniff); HTML, SVG, XML and scripts come as text/plain
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/projects/{project}/skills/{slug}/versions/{version}/files/{file_path}', {'project': project, 'slug': slug, 'version': version, 'file_path': file_path}, {}, None, headers)

    def get_v1_projects_project_webhooks(self, project: str) -> Answer:
        """GET /v1/projects/{project}/webhooks

        The project's webhooks (project owner)
        """
        return self.request('GET', '/v1/projects/{project}/webhooks', {'project': project}, {}, None)

    def get_v1_projects_project_webhooks_webhookID(self, project: str, webhook_id: str) -> Answer:
        """GET /v1/projects/{project}/webhooks/{webhookID}

        A webhook, without its secret
        """
        return self.request('GET', '/v1/projects/{project}/webhooks/{webhookID}', {'project': project, 'webhookID': webhook_id}, {}, None)

    def get_v1_projects_project_webhooks_webhookID_deliveries(self, project: str, webhook_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/projects/{project}/webhooks/{webhookID}/deliveries

        Delivery attempts, newest first (kept 30 days)
        """
        return self.request('GET', '/v1/projects/{project}/webhooks/{webhookID}/deliveries', {'project': project, 'webhookID': webhook_id}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_prompts_id(self, id: str) -> Answer:
        """GET /v1/prompts/{id}

        A prompt (id or slug)
        """
        return self.request('GET', '/v1/prompts/{id}', {'id': id}, {}, None)

    def get_v1_prompts_id_dependents(self, id: str) -> Answer:
        """GET /v1/prompts/{id}/dependents

        The prompts of the same project whose live version, labelled versions or drafts include this one ({{> slug}} or {{> slug@N}}), directly or through other prompts
        """
        return self.request('GET', '/v1/prompts/{id}/dependents', {'id': id}, {}, None)

    def get_v1_prompts_id_diff(self, id: str, *, from_: Optional[int] = None, to: Optional[int] = None, format: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/diff

        Unified diff between two versions
        """
        return self.request('GET', '/v1/prompts/{id}/diff', {'id': id}, {'from': from_, 'to': to, 'format': format}, None)

    def get_v1_prompts_id_history(self, id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/history

        A prompt's changes, newest first
        """
        return self.request('GET', '/v1/prompts/{id}/history', {'id': id}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_prompts_id_labels(self, id: str) -> Answer:
        """GET /v1/prompts/{id}/labels

        The labels: named pointers to published versions besides live
        """
        return self.request('GET', '/v1/prompts/{id}/labels', {'id': id}, {}, None)

    def get_v1_prompts_id_labels_name_history(self, id: str, name: str) -> Answer:
        """GET /v1/prompts/{id}/labels/{name}/history

        Every move of a label, newest first, with who and when
        """
        return self.request('GET', '/v1/prompts/{id}/labels/{name}/history', {'id': id, 'name': name}, {}, None)

    def get_v1_prompts_id_live(self, id: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/live

        The live version, cached, and its files (path, size, sha256); ETag is its commit and If-None-Match answers 304; 404 when nothing is live
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/prompts/{id}/live', {'id': id}, {}, None, headers)

    def get_v1_prompts_id_payloads(self, id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/payloads

        A prompt's payloads
        """
        return self.request('GET', '/v1/prompts/{id}/payloads', {'id': id}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_prompts_id_payloads_payloadID(self, id: str, payload_id: str) -> Answer:
        """GET /v1/prompts/{id}/payloads/{payloadID}

        A payload
        """
        return self.request('GET', '/v1/prompts/{id}/payloads/{payloadID}', {'id': id, 'payloadID': payload_id}, {}, None)

    def get_v1_prompts_id_reviews(self, id: str, *, state: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/reviews

        List reviews, by number
        """
        return self.request('GET', '/v1/prompts/{id}/reviews', {'id': id}, {'state': state, 'limit': limit, 'cursor': cursor}, None)

    def get_v1_prompts_id_reviews_number(self, id: str, number: str) -> Answer:
        """GET /v1/prompts/{id}/reviews/{number}

        A review with its files (against the base), comments, verdicts and mergeable
        """
        return self.request('GET', '/v1/prompts/{id}/reviews/{number}', {'id': id, 'number': number}, {}, None)

    def get_v1_prompts_id_usage(self, id: str) -> Answer:
        """GET /v1/prompts/{id}/usage

        Render counts and last use of each version of a prompt
        """
        return self.request('GET', '/v1/prompts/{id}/usage', {'id': id}, {}, None)

    def get_v1_prompts_id_versions(self, id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None, state: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/versions

        A prompt's versions, oldest first
        """
        return self.request('GET', '/v1/prompts/{id}/versions', {'id': id}, {'limit': limit, 'cursor': cursor, 'state': state}, None)

    def get_v1_prompts_id_versions_version(self, id: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/versions/{version}

        A version; ETag is its commit
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/prompts/{id}/versions/{version}', {'id': id, 'version': version}, {}, None, headers)

    def get_v1_prompts_id_versions_version_evaluations(self, id: str, version: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/prompts/{id}/versions/{version}/evaluations

        A version's evaluations, newest first, without their cases
        """
        return self.request('GET', '/v1/prompts/{id}/versions/{version}/evaluations', {'id': id, 'version': version}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_prompts_id_versions_version_evaluations_evaluationID(self, id: str, version: str, evaluation_id: str) -> Answer:
        """GET /v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}

        An evaluation: its state, counts (cases, passed, failed, errored, changed) and usage, and its cases done, each with the head's output and assertions and the other version's
        """
        return self.request('GET', '/v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}', {'id': id, 'version': version, 'evaluationID': evaluation_id}, {}, None)

    def get_v1_prompts_id_versions_version_variables(self, id: str, version: int) -> Answer:
        """GET /v1/prompts/{id}/versions/{version}/variables

        The variables a version's template uses, and its variables_schema (null when none)
        """
        return self.request('GET', '/v1/prompts/{id}/versions/{version}/variables', {'id': id, 'version': version}, {}, None)

    def get_v1_skills_id(self, id: str) -> Answer:
        """GET /v1/skills/{id}

        A skill (id or slug)
        """
        return self.request('GET', '/v1/skills/{id}', {'id': id}, {}, None)

    def get_v1_skills_id_diff(self, id: str, *, from_: Optional[int] = None, to: Optional[int] = None, format: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/diff

        Unified diff between two versions
        """
        return self.request('GET', '/v1/skills/{id}/diff', {'id': id}, {'from': from_, 'to': to, 'format': format}, None)

    def get_v1_skills_id_history(self, id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/history

        A skill's changes, newest first: commits, publish and archive tags, deletions and promotions
        """
        return self.request('GET', '/v1/skills/{id}/history', {'id': id}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_skills_id_labels(self, id: str) -> Answer:
        """GET /v1/skills/{id}/labels

        The labels: named pointers to published versions besides live
        """
        return self.request('GET', '/v1/skills/{id}/labels', {'id': id}, {}, None)

    def get_v1_skills_id_labels_name_history(self, id: str, name: str) -> Answer:
        """GET /v1/skills/{id}/labels/{name}/history

        Every move of a label, newest first, with who and when
        """
        return self.request('GET', '/v1/skills/{id}/labels/{name}/history', {'id': id, 'name': name}, {}, None)

    def get_v1_skills_id_live(self, id: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/live

        The live version and its files (path, size, sha256); ETag is its commit and If-None-Match answers 304; 404 when nothing is live
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/skills/{id}/live', {'id': id}, {}, None, headers)

    def get_v1_skills_id_reviews(self, id: str, *, state: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/reviews

        List reviews, by number
        """
        return self.request('GET', '/v1/skills/{id}/reviews', {'id': id}, {'state': state, 'limit': limit, 'cursor': cursor}, None)

    def get_v1_skills_id_reviews_number(self, id: str, number: str) -> Answer:
        """GET /v1/skills/{id}/reviews/{number}

        A review with its files (against the base), comments, verdicts and mergeable
        """
        return self.request('GET', '/v1/skills/{id}/reviews/{number}', {'id': id, 'number': number}, {}, None)

    def get_v1_skills_id_versions(self, id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None, state: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/versions

        A skill's versions, oldest first
        """
        return self.request('GET', '/v1/skills/{id}/versions', {'id': id}, {'limit': limit, 'cursor': cursor, 'state': state}, None)

    def get_v1_skills_id_versions_version(self, id: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/versions/{version}

        A version; ETag is its commit
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/skills/{id}/versions/{version}', {'id': id, 'version': version}, {}, None, headers)

    def get_v1_skills_id_versions_version_archive_tar_gz(self, id: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/versions/{version}/archive.tar.gz

        The same as a deterministic tar.gz (the discovery index's package)
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/skills/{id}/versions/{version}/archive.tar.gz', {'id': id, 'version': version}, {}, None, headers)

    def get_v1_skills_id_versions_version_archive_zip(self, id: str, version: int, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/versions/{version}/archive.zip

        A deterministic zip of the version ({version}: a number, "live" or a label name): files at the root sorted by path, each with the commit's time and mode 0644 or 0755; ETag "sha256:<hex>" of the bytes and Repr-Digest. Anonymous callers: published versions of public projects
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/skills/{id}/versions/{version}/archive.zip', {'id': id, 'version': version}, {}, None, headers)

    def get_v1_skills_id_versions_version_download(self, id: str, version: int, *, format: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/versions/{version}/download

        A zip of the version, its files under a folder named for the slug
        """
        return self.request('GET', '/v1/skills/{id}/versions/{version}/download', {'id': id, 'version': version}, {'format': format}, None)

    def get_v1_skills_id_versions_version_files(self, id: str, version: int, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/versions/{version}/files

        A version's files
        """
        return self.request('GET', '/v1/skills/{id}/versions/{version}/files', {'id': id, 'version': version}, {'limit': limit, 'cursor': cursor}, None)

    def get_v1_skills_id_versions_version_files_file_path(self, id: str, version: int, file_path: str, *, if_none_match: Optional[str] = None) -> Answer:
        """GET /v1/skills/{id}/versions/{version}/files/{file_path}

        A file's raw bytes; ETag is its blob id. Sandboxed (Content-Security-Policy: sandbox, nosniff); HTML, SVG, XML and scripts come as text/plain
        """
        headers = {k: v for k, v in {'If-None-Match': if_none_match}.items() if v is not None}
        return self.request('GET', '/v1/skills/{id}/versions/{version}/files/{file_path}', {'id': id, 'version': version, 'file_path': file_path}, {}, None, headers)

    def get_v1_users(self) -> Answer:
        """GET /v1/users

        List users (admin)
        """
        return self.request('GET', '/v1/users', {}, {}, None)

    def get_v1_users_userID(self, user_id: str) -> Answer:
        """GET /v1/users/{userID}

        A user ("me" for the caller)
        """
        return self.request('GET', '/v1/users/{userID}', {'userID': user_id}, {}, None)

    def patch_v1_projects_project(self, project: str, *, body: Any) -> Answer:
        """PATCH /v1/projects/{project}

        Update a project: its name, slug, description, visibility and review_policy (owner)
        """
        return self.request('PATCH', '/v1/projects/{project}', {'project': project}, {}, body)

    def patch_v1_projects_project_prompts_slug(self, project: str, slug: str, *, body: Any) -> Answer:
        """PATCH /v1/projects/{project}/prompts/{slug}

        Update a prompt
        """
        return self.request('PATCH', '/v1/projects/{project}/prompts/{slug}', {'project': project, 'slug': slug}, {}, body)

    def patch_v1_projects_project_prompts_slug_reviews_number_comments_commentID(self, project: str, slug: str, number: str, comment_id: str, *, body: Any) -> Answer:
        """PATCH /v1/projects/{project}/prompts/{slug}/reviews/{number}/comments/{commentID}

        Resolve or unresolve a comment, or edit its body (its author only)
        """
        return self.request('PATCH', '/v1/projects/{project}/prompts/{slug}/reviews/{number}/comments/{commentID}', {'project': project, 'slug': slug, 'number': number, 'commentID': comment_id}, {}, body)

    def patch_v1_projects_project_prompts_slug_versions_version(self, project: str, slug: str, version: int, *, body: Any, if_match: Optional[str] = None) -> Answer:
        """PATCH /v1/projects/{project}/prompts/{slug}/versions/{version}

        Edit a draft's template, messages or config (one commit); honours If-Match ("*": any commit of the draft)
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('PATCH', '/v1/projects/{project}/prompts/{slug}/versions/{version}', {'project': project, 'slug': slug, 'version': version}, {}, body, headers)

    def patch_v1_projects_project_skills_slug(self, project: str, slug: str, *, body: Any) -> Answer:
        """PATCH /v1/projects/{project}/skills/{slug}

        Update a skill
        """
        return self.request('PATCH', '/v1/projects/{project}/skills/{slug}', {'project': project, 'slug': slug}, {}, body)

    def patch_v1_projects_project_skills_slug_reviews_number_comments_commentID(self, project: str, slug: str, number: str, comment_id: str, *, body: Any) -> Answer:
        """PATCH /v1/projects/{project}/skills/{slug}/reviews/{number}/comments/{commentID}

        Resolve or unresolve a comment, or edit its body (its author only)
        """
        return self.request('PATCH', '/v1/projects/{project}/skills/{slug}/reviews/{number}/comments/{commentID}', {'project': project, 'slug': slug, 'number': number, 'commentID': comment_id}, {}, body)

    def patch_v1_projects_project_webhooks_webhookID(self, project: str, webhook_id: str, *, body: Any) -> Answer:
        """PATCH /v1/projects/{project}/webhooks/{webhookID}

        Change a webhook's url, events, assets, description or active
        """
        return self.request('PATCH', '/v1/projects/{project}/webhooks/{webhookID}', {'project': project, 'webhookID': webhook_id}, {}, body)

    def patch_v1_prompts_id(self, id: str, *, body: Any) -> Answer:
        """PATCH /v1/prompts/{id}

        Update a prompt
        """
        return self.request('PATCH', '/v1/prompts/{id}', {'id': id}, {}, body)

    def patch_v1_prompts_id_reviews_number_comments_commentID(self, id: str, number: str, comment_id: str, *, body: Any) -> Answer:
        """PATCH /v1/prompts/{id}/reviews/{number}/comments/{commentID}

        Resolve or unresolve a comment, or edit its body (its author only)
        """
        return self.request('PATCH', '/v1/prompts/{id}/reviews/{number}/comments/{commentID}', {'id': id, 'number': number, 'commentID': comment_id}, {}, body)

    def patch_v1_prompts_id_versions_version(self, id: str, version: int, *, body: Any, if_match: Optional[str] = None) -> Answer:
        """PATCH /v1/prompts/{id}/versions/{version}

        Edit a draft's template, messages or config (one commit); honours If-Match ("*": any commit of the draft)
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('PATCH', '/v1/prompts/{id}/versions/{version}', {'id': id, 'version': version}, {}, body, headers)

    def patch_v1_skills_id(self, id: str, *, body: Any) -> Answer:
        """PATCH /v1/skills/{id}

        Update a skill
        """
        return self.request('PATCH', '/v1/skills/{id}', {'id': id}, {}, body)

    def patch_v1_skills_id_reviews_number_comments_commentID(self, id: str, number: str, comment_id: str, *, body: Any) -> Answer:
        """PATCH /v1/skills/{id}/reviews/{number}/comments/{commentID}

        Resolve or unresolve a comment, or edit its body (its author only)
        """
        return self.request('PATCH', '/v1/skills/{id}/reviews/{number}/comments/{commentID}', {'id': id, 'number': number, 'commentID': comment_id}, {}, body)

    def patch_v1_users_userID(self, user_id: str, *, body: Any) -> Answer:
        """PATCH /v1/users/{userID}

        Update a user. A new password ends the user's other sessions, disabling ends all of them (sessions_revoked; 503 if they could not be ended). 409: the email is in use, or the change would leave no enabled admin
        """
        return self.request('PATCH', '/v1/users/{userID}', {'userID': user_id}, {}, body)

    def post_git_path(self, path: str) -> Answer:
        """POST /git/{path}

        git-upload-pack (clone, fetch) or git-receive-pack (push to a draft)
        """
        return self.request('POST', '/git/{path}', {'path': path}, {}, None)

    def post_mcp(self) -> Answer:
        """POST /mcp

        Model Context Protocol, Streamable HTTP: JSON-RPC requests (docs/mcp.md); 401 with WWW-Authenticate without a valid bearer token
        """
        return self.request('POST', '/mcp', {}, {}, None)

    def post_oauth_register(self, *, body: Any) -> Answer:
        """POST /oauth/register

        Dynamic Client Registration (RFC 7591): a public client with its redirect URIs (https, loopback http, or a private-use scheme)
        """
        return self.request('POST', '/oauth/register', {}, {}, body)

    def post_oauth_revoke(self, *, body: Any) -> Answer:
        """POST /oauth/revoke

        Token revocation (RFC 7009): the token stops working; a refresh token ends its grant's access tokens too
        """
        return self.request('POST', '/oauth/revoke', {}, {}, body)

    def post_oauth_token(self, *, body: Any) -> Answer:
        """POST /oauth/token

        OAuth token endpoint: an authorization code (with its PKCE verifier) or a refresh token (rotated: the old one stops working) for tokens of /mcp (RFC 8707 resource); public clients, no secret
        """
        return self.request('POST', '/oauth/token', {}, {}, body)

    def post_v1_api_keys(self, *, body: Any, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/api-keys

        Create an API key; its token is shown once. expires_at not in the future is 422
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/api-keys', {}, {}, body, headers)

    def post_v1_api_keys_keyID_rotate(self, key_id: str) -> Answer:
        """POST /v1/api-keys/{keyID}/rotate

        Give an API key a new secret; the new token is shown once
        """
        return self.request('POST', '/v1/api-keys/{keyID}/rotate', {'keyID': key_id}, {}, None)

    def post_v1_auth_login(self, *, body: Any) -> Answer:
        """POST /v1/auth/login

        Log in with email and password; the token is a sess_ bearer token. Failed logins are throttled per account and per address: 429 with Retry-After
        """
        return self.request('POST', '/v1/auth/login', {}, {}, body)

    def post_v1_cache_purge(self) -> Answer:
        """POST /v1/cache/purge

        Drop every cached prompt read on every node (admin)
        """
        return self.request('POST', '/v1/cache/purge', {}, {}, None)

    def post_v1_projects(self, *, body: Any, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/projects

        Create a project
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/projects', {}, {}, body, headers)

    def post_v1_projects_project_members(self, project: str, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/members

        Add a member or change a member's role; 422 for no such user, 409 when it would demote the last owner
        """
        return self.request('POST', '/v1/projects/{project}/members', {'project': project}, {}, body)

    def post_v1_projects_project_prompts(self, project: str, *, body: Any, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/projects/{project}/prompts

        Create a prompt
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/projects/{project}/prompts', {'project': project}, {}, body, headers)

    def post_v1_projects_project_prompts_slug_cache_purge(self, project: str, slug: str) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/cache/purge

        Drop a prompt's cached reads on every node (project owner)
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/cache/purge', {'project': project, 'slug': slug}, {}, None)

    def post_v1_projects_project_prompts_slug_payloads(self, project: str, slug: str, *, body: Any, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/payloads

        Create a payload: named sample variables (a commit in the prompt's repository)
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/payloads', {'project': project, 'slug': slug}, {}, body, headers)

    def post_v1_projects_project_prompts_slug_render(self, project: str, slug: str, *, body: Any = None) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/render

        Render the live version (or a given version, or the one a label names: {label}) with variables and/or a payload, partials included from the project's prompts; ETag hashes the version's commit and its partials'; 422 lists missing variables and partials (details.missing) or schema errors (details.errors)
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/render', {'project': project, 'slug': slug}, {}, body)

    def post_v1_projects_project_prompts_slug_reviews_number_approve(self, project: str, slug: str, number: str, *, body: Any = None) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/reviews/{number}/approve

        Approve the review's head; replaces the caller's earlier verdict; 409 unless open. Send commit, the head you read (head.commit): if the head moved since, 409 head_moved with details.head
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/reviews/{number}/approve', {'project': project, 'slug': slug, 'number': number}, {}, body)

    def post_v1_projects_project_prompts_slug_reviews_number_close(self, project: str, slug: str, number: str) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/reviews/{number}/close

        Close a review (its author or a project owner)
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/reviews/{number}/close', {'project': project, 'slug': slug, 'number': number}, {}, None)

    def post_v1_projects_project_prompts_slug_reviews_number_comments(self, project: str, slug: str, number: str, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/reviews/{number}/comments

        Comment on a review, or on a line of a file at the head (or base); 422 for a path or line that does not exist
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/reviews/{number}/comments', {'project': project, 'slug': slug, 'number': number}, {}, body)

    def post_v1_projects_project_prompts_slug_reviews_number_reopen(self, project: str, slug: str, number: str) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/reviews/{number}/reopen

        Reopen a closed review of a draft
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/reviews/{number}/reopen', {'project': project, 'slug': slug, 'number': number}, {}, None)

    def post_v1_projects_project_prompts_slug_reviews_number_request_changes(self, project: str, slug: str, number: str, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/reviews/{number}/request-changes

        Request changes (body required); blocks publishing until the same user gives a new verdict. Send commit as for approve (409 head_moved)
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/reviews/{number}/request-changes', {'project': project, 'slug': slug, 'number': number}, {}, body)

    def post_v1_projects_project_prompts_slug_versions(self, project: str, slug: str, *, body: Any = None, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions

        Open a draft with a template or chat messages and config (from the live version, a version, or empty)
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions', {'project': project, 'slug': slug}, {}, body, headers)

    def post_v1_projects_project_prompts_slug_versions_version_archive(self, project: str, slug: str, version: int) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/archive

        Archive a draft or a published version that is not live. Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/archive', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def post_v1_projects_project_prompts_slug_versions_version_check(self, project: str, slug: str, version: int) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/check

        Render a version with every sample payload of the prompt: per payload ok, missing variables and partials, schema errors, output size. Renders are not counted
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/check', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def post_v1_projects_project_prompts_slug_versions_version_evaluations(self, project: str, slug: str, version: str, *, body: Any = None) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations

        Evaluate a version ({version}: a number, "live" or a label name): every payload (or those listed), repeat times, sent to the version's model in the background, each output checked by the payload's assertions; against a version number, "live" or "base" also runs that version for each case. Outputs are cached by what is sent: fresh sends again. Needs write access. 202 with the evaluation, queued; 409 no_provider; 422 when the prompt has no payloads or the version no model (docs/evaluations.md)
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations', {'project': project, 'slug': slug, 'version': version}, {}, body)

    def post_v1_projects_project_prompts_slug_versions_version_evaluations_evaluationID_cancel(self, project: str, slug: str, version: str, evaluation_id: str) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations/{evaluationID}/cancel

        Cancel an evaluation: no case is sent once it answers; the cases done stay. 409 when it is finished. Needs write access
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations/{evaluationID}/cancel', {'project': project, 'slug': slug, 'version': version, 'evaluationID': evaluation_id}, {}, None)

    def post_v1_projects_project_prompts_slug_versions_version_promote(self, project: str, slug: str, version: int) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/promote

        Make a published version live (a rollback when older). Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/promote', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def post_v1_projects_project_prompts_slug_versions_version_publish(self, project: str, slug: str, version: int, *, body: Any = None) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/publish

        Publish a draft; it goes live and merges its open review. With the project's review_policy requiring approvals, 409 review_required unless the review is mergeable; an owner may send {override: true, reason} (docs/reviews.md). Malformed JSON is 400
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/publish', {'project': project, 'slug': slug, 'version': version}, {}, body)

    def post_v1_projects_project_prompts_slug_versions_version_reviews(self, project: str, slug: str, version: int, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/reviews

        Open a review of a draft against its base; 409 if the version is not a draft or already has an open review
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/reviews', {'project': project, 'slug': slug, 'version': version}, {}, body)

    def post_v1_projects_project_prompts_slug_versions_version_run(self, project: str, slug: str, version: str, *, body: Any = None) -> Answer:
        """POST /v1/projects/{project}/prompts/{slug}/versions/{version}/run

        Render a version ({version}: a number, "live" or a label name) as render does (a text prompt becomes one user message) and send it to a model of the operator's providers: model, model_params and provider from the version's config.json, model and provider overridable. Needs write access (it spends money). 422 for missing variables as render; 409 no_provider when no provider is configured or the one named is not; 502 provider_error with the provider's status and message; 503 with Retry-After when the provider keeps answering 429 (docs/runs.md)
        """
        return self.request('POST', '/v1/projects/{project}/prompts/{slug}/versions/{version}/run', {'project': project, 'slug': slug, 'version': version}, {}, body)

    def post_v1_projects_project_skills(self, project: str, *, body: Any, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/projects/{project}/skills

        Create a skill
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/projects/{project}/skills', {'project': project}, {}, body, headers)

    def post_v1_projects_project_skills_slug_reviews_number_approve(self, project: str, slug: str, number: str, *, body: Any = None) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/reviews/{number}/approve

        Approve the review's head; replaces the caller's earlier verdict; 409 unless open. Send commit, the head you read (head.commit): if the head moved since, 409 head_moved with details.head
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/reviews/{number}/approve', {'project': project, 'slug': slug, 'number': number}, {}, body)

    def post_v1_projects_project_skills_slug_reviews_number_close(self, project: str, slug: str, number: str) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/reviews/{number}/close

        Close a review (its author or a project owner)
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/reviews/{number}/close', {'project': project, 'slug': slug, 'number': number}, {}, None)

    def post_v1_projects_project_skills_slug_reviews_number_comments(self, project: str, slug: str, number: str, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/reviews/{number}/comments

        Comment on a review, or on a line of a file at the head (or base); 422 for a path or line that does not exist
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/reviews/{number}/comments', {'project': project, 'slug': slug, 'number': number}, {}, body)

    def post_v1_projects_project_skills_slug_reviews_number_reopen(self, project: str, slug: str, number: str) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/reviews/{number}/reopen

        Reopen a closed review of a draft
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/reviews/{number}/reopen', {'project': project, 'slug': slug, 'number': number}, {}, None)

    def post_v1_projects_project_skills_slug_reviews_number_request_changes(self, project: str, slug: str, number: str, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/reviews/{number}/request-changes

        Request changes (body required); blocks publishing until the same user gives a new verdict. Send commit as for approve (409 head_moved)
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/reviews/{number}/request-changes', {'project': project, 'slug': slug, 'number': number}, {}, body)

    def post_v1_projects_project_skills_slug_versions(self, project: str, slug: str, *, body: Any = None, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/versions

        Open a draft (from the live version, {"from": N} or {"from": "empty"}), or upload a zip as one
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/versions', {'project': project, 'slug': slug}, {}, body, headers)

    def post_v1_projects_project_skills_slug_versions_upload(self, project: str, slug: str, *, body: Any, from_: Optional[str] = None, message: Optional[str] = None, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/versions/upload

        Upload a zip (raw or multipart "file") as a new draft (with ?from=live: over the live version, one commit holding exactly the zip's files); 409 when two of its paths collide after NFC normalization or case folding
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/versions/upload', {'project': project, 'slug': slug}, {'from': from_, 'message': message}, body, headers)

    def post_v1_projects_project_skills_slug_versions_version_archive(self, project: str, slug: str, version: int) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/versions/{version}/archive

        Archive a draft or a published version that is not live. Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/versions/{version}/archive', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def post_v1_projects_project_skills_slug_versions_version_files(self, project: str, slug: str, version: int, *, body: Any, if_match: Optional[str] = None) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/versions/{version}/files

        Create or update one file of a draft (a commit); honours If-Match. 409 when the path equals another of the version after Unicode NFC normalization or case folding (details.existing names it)
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/versions/{version}/files', {'project': project, 'slug': slug, 'version': version}, {}, body, headers)

    def post_v1_projects_project_skills_slug_versions_version_promote(self, project: str, slug: str, version: int) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/versions/{version}/promote

        Make a published version live (a rollback when older). Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/versions/{version}/promote', {'project': project, 'slug': slug, 'version': version}, {}, None)

    def post_v1_projects_project_skills_slug_versions_version_publish(self, project: str, slug: str, version: int, *, body: Any = None) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/versions/{version}/publish

        Publish a draft (needs a valid SKILL.md); it goes live and merges its open review. With the project's review_policy requiring approvals, 409 review_required unless the review is mergeable; an owner may send {override: true, reason} (docs/reviews.md). Malformed JSON is 400
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/versions/{version}/publish', {'project': project, 'slug': slug, 'version': version}, {}, body)

    def post_v1_projects_project_skills_slug_versions_version_reviews(self, project: str, slug: str, version: int, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/skills/{slug}/versions/{version}/reviews

        Open a review of a draft against its base; 409 if the version is not a draft or already has an open review
        """
        return self.request('POST', '/v1/projects/{project}/skills/{slug}/versions/{version}/reviews', {'project': project, 'slug': slug, 'version': version}, {}, body)

    def post_v1_projects_project_webhooks(self, project: str, *, body: Any) -> Answer:
        """POST /v1/projects/{project}/webhooks

        Subscribe a receiver to the project's events (project owner). The signing secret (whsec_…) is in this answer only. A URL that is not absolute http(s), or resolves to a loopback, private, link-local or metadata address, is 422; so are unknown event types
        """
        return self.request('POST', '/v1/projects/{project}/webhooks', {'project': project}, {}, body)

    def post_v1_projects_project_webhooks_webhookID_deliveries_deliveryID_redeliver(self, project: str, webhook_id: str, delivery_id: str) -> Answer:
        """POST /v1/projects/{project}/webhooks/{webhookID}/deliveries/{deliveryID}/redeliver

        Deliver that attempt's event again, now
        """
        return self.request('POST', '/v1/projects/{project}/webhooks/{webhookID}/deliveries/{deliveryID}/redeliver', {'project': project, 'webhookID': webhook_id, 'deliveryID': delivery_id}, {}, None)

    def post_v1_projects_project_webhooks_webhookID_ping(self, project: str, webhook_id: str) -> Answer:
        """POST /v1/projects/{project}/webhooks/{webhookID}/ping

        Send the webhook a ping event now
        """
        return self.request('POST', '/v1/projects/{project}/webhooks/{webhookID}/ping', {'project': project, 'webhookID': webhook_id}, {}, None)

    def post_v1_projects_project_webhooks_webhookID_rotate_secret(self, project: str, webhook_id: str) -> Answer:
        """POST /v1/projects/{project}/webhooks/{webhookID}/rotate-secret

        A new signing secret, shown once; the old one keeps signing beside it for 24 hours
        """
        return self.request('POST', '/v1/projects/{project}/webhooks/{webhookID}/rotate-secret', {'project': project, 'webhookID': webhook_id}, {}, None)

    def post_v1_prompts_id_cache_purge(self, id: str) -> Answer:
        """POST /v1/prompts/{id}/cache/purge

        Drop a prompt's cached reads on every node (project owner)
        """
        return self.request('POST', '/v1/prompts/{id}/cache/purge', {'id': id}, {}, None)

    def post_v1_prompts_id_payloads(self, id: str, *, body: Any, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/prompts/{id}/payloads

        Create a payload: named sample variables (a commit in the prompt's repository)
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/prompts/{id}/payloads', {'id': id}, {}, body, headers)

    def post_v1_prompts_id_render(self, id: str, *, body: Any = None) -> Answer:
        """POST /v1/prompts/{id}/render

        Render the live version (or a given version, or the one a label names: {label}) with variables and/or a payload, partials included from the project's prompts; ETag hashes the version's commit and its partials'; 422 lists missing variables and partials (details.missing) or schema errors (details.errors)
        """
        return self.request('POST', '/v1/prompts/{id}/render', {'id': id}, {}, body)

    def post_v1_prompts_id_reviews_number_approve(self, id: str, number: str, *, body: Any = None) -> Answer:
        """POST /v1/prompts/{id}/reviews/{number}/approve

        Approve the review's head; replaces the caller's earlier verdict; 409 unless open. Send commit, the head you read (head.commit): if the head moved since, 409 head_moved with details.head
        """
        return self.request('POST', '/v1/prompts/{id}/reviews/{number}/approve', {'id': id, 'number': number}, {}, body)

    def post_v1_prompts_id_reviews_number_close(self, id: str, number: str) -> Answer:
        """POST /v1/prompts/{id}/reviews/{number}/close

        Close a review (its author or a project owner)
        """
        return self.request('POST', '/v1/prompts/{id}/reviews/{number}/close', {'id': id, 'number': number}, {}, None)

    def post_v1_prompts_id_reviews_number_comments(self, id: str, number: str, *, body: Any) -> Answer:
        """POST /v1/prompts/{id}/reviews/{number}/comments

        Comment on a review, or on a line of a file at the head (or base); 422 for a path or line that does not exist
        """
        return self.request('POST', '/v1/prompts/{id}/reviews/{number}/comments', {'id': id, 'number': number}, {}, body)

    def post_v1_prompts_id_reviews_number_reopen(self, id: str, number: str) -> Answer:
        """POST /v1/prompts/{id}/reviews/{number}/reopen

        Reopen a closed review of a draft
        """
        return self.request('POST', '/v1/prompts/{id}/reviews/{number}/reopen', {'id': id, 'number': number}, {}, None)

    def post_v1_prompts_id_reviews_number_request_changes(self, id: str, number: str, *, body: Any) -> Answer:
        """POST /v1/prompts/{id}/reviews/{number}/request-changes

        Request changes (body required); blocks publishing until the same user gives a new verdict. Send commit as for approve (409 head_moved)
        """
        return self.request('POST', '/v1/prompts/{id}/reviews/{number}/request-changes', {'id': id, 'number': number}, {}, body)

    def post_v1_prompts_id_versions(self, id: str, *, body: Any = None, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/prompts/{id}/versions

        Open a draft with a template or chat messages and config (from the live version, a version, or empty)
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/prompts/{id}/versions', {'id': id}, {}, body, headers)

    def post_v1_prompts_id_versions_version_archive(self, id: str, version: int) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/archive

        Archive a draft or a published version that is not live. Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/archive', {'id': id, 'version': version}, {}, None)

    def post_v1_prompts_id_versions_version_check(self, id: str, version: int) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/check

        Render a version with every sample payload of the prompt: per payload ok, missing variables and partials, schema errors, output size. Renders are not counted
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/check', {'id': id, 'version': version}, {}, None)

    def post_v1_prompts_id_versions_version_evaluations(self, id: str, version: str, *, body: Any = None) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/evaluations

        Evaluate a version ({version}: a number, "live" or a label name): every payload (or those listed), repeat times, sent to the version's model in the background, each output checked by the payload's assertions; against a version number, "live" or "base" also runs that version for each case. Outputs are cached by what is sent: fresh sends again. Needs write access. 202 with the evaluation, queued; 409 no_provider; 422 when the prompt has no payloads or the version no model (docs/evaluations.md)
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/evaluations', {'id': id, 'version': version}, {}, body)

    def post_v1_prompts_id_versions_version_evaluations_evaluationID_cancel(self, id: str, version: str, evaluation_id: str) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}/cancel

        Cancel an evaluation: no case is sent once it answers; the cases done stay. 409 when it is finished. Needs write access
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}/cancel', {'id': id, 'version': version, 'evaluationID': evaluation_id}, {}, None)

    def post_v1_prompts_id_versions_version_promote(self, id: str, version: int) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/promote

        Make a published version live (a rollback when older). Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/promote', {'id': id, 'version': version}, {}, None)

    def post_v1_prompts_id_versions_version_publish(self, id: str, version: int, *, body: Any = None) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/publish

        Publish a draft; it goes live and merges its open review. With the project's review_policy requiring approvals, 409 review_required unless the review is mergeable; an owner may send {override: true, reason} (docs/reviews.md). Malformed JSON is 400
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/publish', {'id': id, 'version': version}, {}, body)

    def post_v1_prompts_id_versions_version_reviews(self, id: str, version: int, *, body: Any) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/reviews

        Open a review of a draft against its base; 409 if the version is not a draft or already has an open review
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/reviews', {'id': id, 'version': version}, {}, body)

    def post_v1_prompts_id_versions_version_run(self, id: str, version: str, *, body: Any = None) -> Answer:
        """POST /v1/prompts/{id}/versions/{version}/run

        Render a version ({version}: a number, "live" or a label name) as render does (a text prompt becomes one user message) and send it to a model of the operator's providers: model, model_params and provider from the version's config.json, model and provider overridable. Needs write access (it spends money). 422 for missing variables as render; 409 no_provider when no provider is configured or the one named is not; 502 provider_error with the provider's status and message; 503 with Retry-After when the provider keeps answering 429 (docs/runs.md)
        """
        return self.request('POST', '/v1/prompts/{id}/versions/{version}/run', {'id': id, 'version': version}, {}, body)

    def post_v1_skills_id_reviews_number_approve(self, id: str, number: str, *, body: Any = None) -> Answer:
        """POST /v1/skills/{id}/reviews/{number}/approve

        Approve the review's head; replaces the caller's earlier verdict; 409 unless open. Send commit, the head you read (head.commit): if the head moved since, 409 head_moved with details.head
        """
        return self.request('POST', '/v1/skills/{id}/reviews/{number}/approve', {'id': id, 'number': number}, {}, body)

    def post_v1_skills_id_reviews_number_close(self, id: str, number: str) -> Answer:
        """POST /v1/skills/{id}/reviews/{number}/close

        Close a review (its author or a project owner)
        """
        return self.request('POST', '/v1/skills/{id}/reviews/{number}/close', {'id': id, 'number': number}, {}, None)

    def post_v1_skills_id_reviews_number_comments(self, id: str, number: str, *, body: Any) -> Answer:
        """POST /v1/skills/{id}/reviews/{number}/comments

        Comment on a review, or on a line of a file at the head (or base); 422 for a path or line that does not exist
        """
        return self.request('POST', '/v1/skills/{id}/reviews/{number}/comments', {'id': id, 'number': number}, {}, body)

    def post_v1_skills_id_reviews_number_reopen(self, id: str, number: str) -> Answer:
        """POST /v1/skills/{id}/reviews/{number}/reopen

        Reopen a closed review of a draft
        """
        return self.request('POST', '/v1/skills/{id}/reviews/{number}/reopen', {'id': id, 'number': number}, {}, None)

    def post_v1_skills_id_reviews_number_request_changes(self, id: str, number: str, *, body: Any) -> Answer:
        """POST /v1/skills/{id}/reviews/{number}/request-changes

        Request changes (body required); blocks publishing until the same user gives a new verdict. Send commit as for approve (409 head_moved)
        """
        return self.request('POST', '/v1/skills/{id}/reviews/{number}/request-changes', {'id': id, 'number': number}, {}, body)

    def post_v1_skills_id_versions(self, id: str, *, body: Any = None, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/skills/{id}/versions

        Open a draft (from the live version, {"from": N} or {"from": "empty"}), or upload a zip as one
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/skills/{id}/versions', {'id': id}, {}, body, headers)

    def post_v1_skills_id_versions_upload(self, id: str, *, body: Any, from_: Optional[str] = None, message: Optional[str] = None, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/skills/{id}/versions/upload

        Upload a zip (raw or multipart "file") as a new draft (with ?from=live: over the live version, one commit holding exactly the zip's files); 409 when two of its paths collide after NFC normalization or case folding
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/skills/{id}/versions/upload', {'id': id}, {'from': from_, 'message': message}, body, headers)

    def post_v1_skills_id_versions_version_archive(self, id: str, version: int) -> Answer:
        """POST /v1/skills/{id}/versions/{version}/archive

        Archive a draft or a published version that is not live. Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/skills/{id}/versions/{version}/archive', {'id': id, 'version': version}, {}, None)

    def post_v1_skills_id_versions_version_files(self, id: str, version: int, *, body: Any, if_match: Optional[str] = None) -> Answer:
        """POST /v1/skills/{id}/versions/{version}/files

        Create or update one file of a draft (a commit); honours If-Match. 409 when the path equals another of the version after Unicode NFC normalization or case folding (details.existing names it)
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('POST', '/v1/skills/{id}/versions/{version}/files', {'id': id, 'version': version}, {}, body, headers)

    def post_v1_skills_id_versions_version_promote(self, id: str, version: int) -> Answer:
        """POST /v1/skills/{id}/versions/{version}/promote

        Make a published version live (a rollback when older). Takes no body (or a JSON object); malformed JSON is 400
        """
        return self.request('POST', '/v1/skills/{id}/versions/{version}/promote', {'id': id, 'version': version}, {}, None)

    def post_v1_skills_id_versions_version_publish(self, id: str, version: int, *, body: Any = None) -> Answer:
        """POST /v1/skills/{id}/versions/{version}/publish

        Publish a draft (needs a valid SKILL.md); it goes live and merges its open review. With the project's review_policy requiring approvals, 409 review_required unless the review is mergeable; an owner may send {override: true, reason} (docs/reviews.md). Malformed JSON is 400
        """
        return self.request('POST', '/v1/skills/{id}/versions/{version}/publish', {'id': id, 'version': version}, {}, body)

    def post_v1_skills_id_versions_version_reviews(self, id: str, version: int, *, body: Any) -> Answer:
        """POST /v1/skills/{id}/versions/{version}/reviews

        Open a review of a draft against its base; 409 if the version is not a draft or already has an open review
        """
        return self.request('POST', '/v1/skills/{id}/versions/{version}/reviews', {'id': id, 'version': version}, {}, body)

    def post_v1_users(self, *, body: Any, idempotency_key: Optional[str] = None) -> Answer:
        """POST /v1/users

        Create a user (admin); a name with a line break, NUL, '<' or '>' is 400 (it becomes a git author name)
        """
        headers = {k: v for k, v in {'Idempotency-Key': idempotency_key}.items() if v is not None}
        return self.request('POST', '/v1/users', {}, {}, body, headers)

    def put_v1_projects_project_members_userID(self, project: str, user_id: str, *, body: Any) -> Answer:
        """PUT /v1/projects/{project}/members/{userID}

        Set a member's role; 409 when it would demote the last owner
        """
        return self.request('PUT', '/v1/projects/{project}/members/{userID}', {'project': project, 'userID': user_id}, {}, body)

    def put_v1_projects_project_prompts_slug_labels_name(self, project: str, slug: str, name: str, *, body: Any) -> Answer:
        """PUT /v1/projects/{project}/prompts/{slug}/labels/{name}

        Point a label at a published version (409 otherwise); a protected label needs a reviewed version or an owner's override (409 review_required); live is reserved (422)
        """
        return self.request('PUT', '/v1/projects/{project}/prompts/{slug}/labels/{name}', {'project': project, 'slug': slug, 'name': name}, {}, body)

    def put_v1_projects_project_prompts_slug_payloads_payloadID(self, project: str, slug: str, payload_id: str, *, body: Any) -> Answer:
        """PUT /v1/projects/{project}/prompts/{slug}/payloads/{payloadID}

        Replace a payload's variables and name
        """
        return self.request('PUT', '/v1/projects/{project}/prompts/{slug}/payloads/{payloadID}', {'project': project, 'slug': slug, 'payloadID': payload_id}, {}, body)

    def put_v1_projects_project_skills_slug_labels_name(self, project: str, slug: str, name: str, *, body: Any) -> Answer:
        """PUT /v1/projects/{project}/skills/{slug}/labels/{name}

        Point a label at a published version (409 otherwise); a protected label needs a reviewed version or an owner's override (409 review_required); live is reserved (422)
        """
        return self.request('PUT', '/v1/projects/{project}/skills/{slug}/labels/{name}', {'project': project, 'slug': slug, 'name': name}, {}, body)

    def put_v1_projects_project_skills_slug_versions_version_files(self, project: str, slug: str, version: int, *, body: Any, message: Optional[str] = None, if_match: Optional[str] = None) -> Answer:
        """PUT /v1/projects/{project}/skills/{slug}/versions/{version}/files

        Set a draft's whole content from a zip (quire push) as one commit: files added and changed, paths the zip lacks deleted, nothing committed when nothing differs; honours If-Match. 409 when two paths collide after NFC normalization or case folding
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('PUT', '/v1/projects/{project}/skills/{slug}/versions/{version}/files', {'project': project, 'slug': slug, 'version': version}, {'message': message}, body, headers)

    def put_v1_prompts_id_labels_name(self, id: str, name: str, *, body: Any) -> Answer:
        """PUT /v1/prompts/{id}/labels/{name}

        Point a label at a published version (409 otherwise); a protected label needs a reviewed version or an owner's override (409 review_required); live is reserved (422)
        """
        return self.request('PUT', '/v1/prompts/{id}/labels/{name}', {'id': id, 'name': name}, {}, body)

    def put_v1_prompts_id_payloads_payloadID(self, id: str, payload_id: str, *, body: Any) -> Answer:
        """PUT /v1/prompts/{id}/payloads/{payloadID}

        Replace a payload's variables and name
        """
        return self.request('PUT', '/v1/prompts/{id}/payloads/{payloadID}', {'id': id, 'payloadID': payload_id}, {}, body)

    def put_v1_skills_id_labels_name(self, id: str, name: str, *, body: Any) -> Answer:
        """PUT /v1/skills/{id}/labels/{name}

        Point a label at a published version (409 otherwise); a protected label needs a reviewed version or an owner's override (409 review_required); live is reserved (422)
        """
        return self.request('PUT', '/v1/skills/{id}/labels/{name}', {'id': id, 'name': name}, {}, body)

    def put_v1_skills_id_versions_version_files(self, id: str, version: int, *, body: Any, message: Optional[str] = None, if_match: Optional[str] = None) -> Answer:
        """PUT /v1/skills/{id}/versions/{version}/files

        Set a draft's whole content from a zip (quire push) as one commit: files added and changed, paths the zip lacks deleted, nothing committed when nothing differs; honours If-Match. 409 when two paths collide after NFC normalization or case folding
        """
        headers = {k: v for k, v in {'If-Match': if_match}.items() if v is not None}
        return self.request('PUT', '/v1/skills/{id}/versions/{version}/files', {'id': id, 'version': version}, {'message': message}, body, headers)
