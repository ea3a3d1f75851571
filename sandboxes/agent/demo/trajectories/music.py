"""Demo trajectory: a calm piano piece in A minor, MIDI and WAV (recorded model choices)."""
# ruff: noqa: E501 - recorded data: long lines are the commands and files the model wrote

COMPOSE = r"""# "Evening in A minor": a calm piano piece, 8 bars at 80 bpm plus a held final chord.
# Left hand: broken chords in eighth notes. Right hand: a simple, mostly stepwise melody.
from midiutil import MIDIFile

TEMPO = 80
OUT = "/testbed/output/evening-in-a-minor.mid"

# Am - F - C - G - Am - Dm - E - Am (E major for a harmonic-minor cadence)
CHORDS = [
    [45, 52, 57, 60], [41, 48, 53, 57], [48, 55, 60, 64], [43, 50, 55, 59],
    [45, 52, 57, 60], [38, 45, 50, 53], [40, 47, 52, 56], [45, 52, 57, 60],
]
# (pitch, beats) per bar, four beats each; 0 is a rest.
MELODY = [
    [(76, 1.5), (74, 0.5), (72, 1), (71, 1)],
    [(72, 2), (69, 1), (72, 1)],
    [(76, 1.5), (79, 0.5), (76, 1), (74, 1)],
    [(74, 2), (71, 2)],
    [(72, 1), (74, 1), (76, 1), (72, 1)],
    [(74, 1.5), (72, 0.5), (69, 1), (77, 1)],
    [(76, 1), (74, 1), (71, 1), (68, 1)],
    [(69, 4)],
]

midi = MIDIFile(2, deinterleave=False)
for track, name in ((0, "Right hand"), (1, "Left hand")):
    midi.addTrackName(track, 0, name)
    midi.addTempo(track, 0, TEMPO)
    midi.addProgramChange(track, track, 0, 0)  # Acoustic Grand Piano

for bar, chord in enumerate(CHORDS):
    start = bar * 4
    midi.addControllerEvent(1, 1, start, 64, 100)  # sustain pedal down...
    midi.addControllerEvent(1, 1, start + 3.9, 64, 0)  # ...and up before the next chord
    pattern = [chord[0], chord[1], chord[2], chord[3], chord[2], chord[1], chord[2], chord[3]]
    for step, pitch in enumerate(pattern):
        velocity = 58 if step == 0 else 44 + (step % 2) * 4
        midi.addNote(1, 1, pitch, start + step * 0.5, 0.5, velocity)
    beat = start
    for pitch, length in MELODY[bar]:
        if pitch:
            midi.addNote(0, 0, pitch, beat, length, 66 if beat == start else 58)
        beat += length

# A soft final A minor chord, held for two beats.
end = len(CHORDS) * 4
for pitch in (45, 52, 57, 60, 64, 69):
    midi.addNote(1, 1, pitch, end, 2, 46)

with open(OUT, "wb") as handle:
    midi.writeFile(handle)
print(f"wrote {OUT}")
"""

TRAJECTORY = {
    "kind": "music",
    "title": "Calm piano piece in A minor",
    "brief": (
        "Compose a calm, gentle piano piece in A minor, 20 to 30 seconds long. "
        "Give me the MIDI file and a WAV recording of it."
    ),
    "keywords": [
        "music",
        "piano",
        "piece",
        "song",
        "melody",
        "midi",
        "wav",
        "compose",
        "minor",
        "audio",
        "tune",
        "calm",
    ],
    "steps": [
        {
            "text": "Let me see which MIDI and synthesis tools are installed.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "python3 -c 'import midiutil, mido; print(\"midiutil + mido ok\")'; which fluidsynth; "
                        'echo "soundfont: $SOUNDFONT"; ls -la "$SOUNDFONT"'
                    },
                }
            ],
        },
        {
            "text": (
                "midiutil, mido and fluidsynth with a General MIDI soundfont are available. At 80 bpm, 8 bars of 4/4 "
                "last 24 s, plus a held final chord and the piano's release: inside 20-30 s. I'll write broken chords (Am-F-C-G-Am-Dm-E-Am) "
                "under a simple melody."
            ),
            "calls": [
                {
                    "name": "str_replace_editor",
                    "arguments": {"command": "create", "path": "/testbed/work/compose.py", "file_text": COMPOSE},
                }
            ],
        },
        {
            "text": "Writing the MIDI file and rendering it to WAV with fluidsynth.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "mkdir -p /testbed/output && cd /testbed/work && python3 compose.py && "
                        'fluidsynth -ni -g 0.9 -r 44100 -F /testbed/output/evening-in-a-minor.wav "$SOUNDFONT" '
                        "/testbed/output/evening-in-a-minor.mid > fluidsynth.log 2>&1; tail -n 3 fluidsynth.log"
                    },
                }
            ],
        },
        {
            "text": "Checking the lengths of both files.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "python3 - <<'EOF'\nimport wave, mido\nmid = mido.MidiFile('/testbed/output/evening-in-a-minor.mid')\n"
                        "print(f'MIDI: {mid.length:.1f} s, {len(mid.tracks)} tracks')\n"
                        "with wave.open('/testbed/output/evening-in-a-minor.wav') as w:\n"
                        "    print(f'WAV: {w.getnframes() / w.getframerate():.1f} s, {w.getnchannels()} channels, {w.getframerate()} Hz')\nEOF"
                    },
                }
            ],
        },
        {
            "text": "Both files are in place and within 20-30 s.",
            "calls": [
                {
                    "name": "submit",
                    "arguments": {
                        "summary": (
                            "'Evening in A minor', a calm piano piece of about 26 s at 80 bpm: broken chords "
                            "(Am-F-C-G-Am-Dm-E-Am) under a simple melody, ending on a soft held chord. "
                            "evening-in-a-minor.mid is the score, evening-in-a-minor.wav the recording (fluidsynth, "
                            "General MIDI piano)."
                        )
                    },
                }
            ],
        },
    ],
}

FOLLOW_UPS = [
    {
        "instruction": "Make it a little slower and play it on strings instead of piano.",
        "steps": [
            {
                "text": "Let me see what the first version left in /testbed.",
                "calls": [{"name": "execute_bash", "arguments": {"command": "ls -R /testbed"}}],
            },
            {
                "text": (
                    "compose.py writes the MIDI file and fluidsynth renders it. A little slower: 80 to 68 bpm, which "
                    "stretches the 8 bars and the final chord to about 30 s."
                ),
                "calls": [
                    {
                        "name": "str_replace_editor",
                        "arguments": {
                            "command": "str_replace",
                            "path": "/testbed/work/compose.py",
                            "old_str": "TEMPO = 80\n",
                            "new_str": "TEMPO = 68\n",
                        },
                    }
                ],
            },
            {
                "text": (
                    "Strings instead of piano, in General MIDI programs: a violin sings the melody (40) over a "
                    "string ensemble playing the broken chords (48)."
                ),
                "calls": [
                    {
                        "name": "str_replace_editor",
                        "arguments": {
                            "command": "str_replace",
                            "path": "/testbed/work/compose.py",
                            "old_str": "    midi.addProgramChange(track, track, 0, 0)  # Acoustic Grand Piano\n",
                            "new_str": "    midi.addProgramChange(track, track, 0, 40 if track == 0 else 48)  # Violin, String Ensemble 1\n",
                        },
                    }
                ],
            },
            {
                "text": "Updating the description at the top of the script to match.",
                "calls": [
                    {
                        "name": "str_replace_editor",
                        "arguments": {
                            "command": "str_replace",
                            "path": "/testbed/work/compose.py",
                            "old_str": '# "Evening in A minor": a calm piano piece, 8 bars at 80 bpm plus a held final chord.\n'
                            "# Left hand: broken chords in eighth notes. Right hand: a simple, mostly stepwise melody.\n",
                            "new_str": '# "Evening in A minor" for strings: 8 bars at 68 bpm plus a held final chord.\n'
                            "# String ensemble: broken chords in eighth notes. Violin: a simple, mostly stepwise melody.\n",
                        },
                    }
                ],
            },
            {
                "text": "Writing the MIDI file again and rendering the new WAV.",
                "calls": [
                    {
                        "name": "execute_bash",
                        "arguments": {
                            "command": "cd /testbed/work && python3 compose.py && "
                            'fluidsynth -ni -g 0.9 -r 44100 -F /testbed/output/evening-in-a-minor.wav "$SOUNDFONT" '
                            "/testbed/output/evening-in-a-minor.mid > fluidsynth.log 2>&1; tail -n 3 fluidsynth.log"
                        },
                    }
                ],
            },
            {
                "text": "Checking the tempo, the instruments and the lengths.",
                "calls": [
                    {
                        "name": "execute_bash",
                        "arguments": {
                            "command": "python3 - <<'EOF'\nimport wave, mido\nmid = mido.MidiFile('/testbed/output/evening-in-a-minor.mid')\n"
                            "tempos = {round(mido.tempo2bpm(m.tempo)) for t in mid.tracks for m in t if m.type == 'set_tempo'}\n"
                            "programs = sorted({m.program for t in mid.tracks for m in t if m.type == 'program_change'})\n"
                            "print(f'MIDI: {mid.length:.1f} s at {tempos} bpm, programs {programs}')\n"
                            "with wave.open('/testbed/output/evening-in-a-minor.wav') as w:\n"
                            "    print(f'WAV: {w.getnframes() / w.getframerate():.1f} s')\nEOF"
                        },
                    }
                ],
            },
            {
                "text": "Slower, and on strings.",
                "calls": [
                    {
                        "name": "submit",
                        "arguments": {
                            "summary": (
                                "'Evening in A minor' is now played by strings at 68 bpm instead of piano at 80: a "
                                "violin carries the melody over a string ensemble's broken chords. The music lasts "
                                "30 s and the recording 35 s, as the strings' last chord fades out slowly. "
                                "evening-in-a-minor.mid and evening-in-a-minor.wav are both updated."
                            )
                        },
                    }
                ],
            },
        ],
    }
]
