"""Demo trajectory for briefs that match none of the showcase ones: it says
honestly what the demo replay can do (recorded model choices)."""

README = """# About this result

This was made by the **demo model**, which replays recorded trajectories instead of
thinking about your brief. It knows five showcase briefs:

- an interactive 3-day city food map (one offline HTML file),
- a tech-conference poster from an event JSON (SVG, PNG and social versions),
- a 12-second birthday countdown video (MP4),
- a calm piano piece in A minor (MIDI and WAV),
- a short illustrated PDF report with a chart.

Ask for one of those to see the demo work, or choose a real model endpoint
(any OpenAI-compatible API) to have your own brief carried out.
"""

TRAJECTORY = {
    "kind": "other",
    "title": "What the demo model can do",
    "brief": "",
    "keywords": [],
    "steps": [
        {
            "text": (
                "I am the demo model: I replay recorded work and cannot plan for a new brief. "
                "I'll leave a note explaining what I can show."
            ),
            "calls": [
                {
                    "name": "str_replace_editor",
                    "arguments": {"command": "create", "path": "/testbed/output/README.md", "file_text": README},
                }
            ],
        },
        {
            "text": "",
            "calls": [
                {
                    "name": "submit",
                    "arguments": {
                        "summary": (
                            "The demo model only replays five showcase briefs (food map, poster, countdown video, "
                            "piano piece, PDF report). README.md lists them; choose a real model for other briefs."
                        )
                    },
                }
            ],
        },
    ],
}
