"""Share links: a creation's work shown to anyone who has the link, without an account, and
embedded in other sites. The pages a visitor sees are served from the artifact origin, never
with the platform's cookies (creations.artifacts.origin)."""
