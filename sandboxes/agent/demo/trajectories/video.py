"""Demo trajectory: a 12-second birthday countdown video (recorded model choices)."""
# ruff: noqa: E501 - recorded data: long lines are the commands and files the model wrote

MAKE_VIDEO = r"""# 12-second birthday countdown: 10..1 (one second each), then a greeting.
# Frames are drawn with Pillow and piped straight into ffmpeg (H.264, 1280x720).
import glob
import random
import subprocess

from PIL import Image, ImageDraw, ImageFont, ImageOps

W, H, FPS = 1280, 720, 24
COUNT_FROM = 10
GREETING_SECONDS = 2
NAME = "Maya"
OUT = "/testbed/output/birthday-countdown.mp4"


def font(size):
    for pattern in ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "/usr/share/fonts/**/*Bold*.ttf"):
        found = sorted(glob.glob(pattern, recursive=True))
        if found:
            return ImageFont.truetype(found[0], size)
    return ImageFont.load_default(size)


def gradient(top, bottom):
    ramp = Image.linear_gradient("L").resize((W, H))
    return ImageOps.colorize(ramp, top, bottom).convert("RGB")


PALETTE = [("#1d2b64", "#f8cdda"), ("#42275a", "#734b6d"), ("#0f2027", "#2c5364"), ("#614385", "#516395"),
           ("#cc2b5e", "#753a88"), ("#2b5876", "#4e4376"), ("#ee9ca7", "#ffdde1"), ("#1a2980", "#26d0ce"),
           ("#ff512f", "#dd2476"), ("#16222a", "#3a6073")]
backgrounds = [gradient(*PALETTE[i % len(PALETTE)]) for i in range(COUNT_FROM)]
greeting_bg = gradient("#ff9a9e", "#fad0c4")
number_fonts = {size: font(size) for size in range(260, 421, 8)}
small = font(44)
big = font(96)

rng = random.Random(7)
confetti = [(rng.uniform(0, W), rng.uniform(-H, 0), rng.uniform(140, 320), rng.uniform(6, 14),
             rng.choice(["#ff595e", "#ffca3a", "#8ac926", "#1982c4", "#6a4c93", "#ffffff"])) for _ in range(140)]


def ease_out(x):
    return 1 - (1 - x) ** 3


def countdown_frame(t):
    second = int(t)
    phase = t - second
    number = COUNT_FROM - second
    frame = backgrounds[second].copy()
    draw = ImageDraw.Draw(frame)
    # A ring that empties over the second.
    box = (W / 2 - 250, H / 2 - 250, W / 2 + 250, H / 2 + 250)
    draw.ellipse(box, outline=(255, 255, 255, 60), width=6)
    draw.arc(box, start=-90, end=-90 + 360 * (1 - phase), fill="white", width=14)
    size = 260 + 8 * round(20 * (1 - ease_out(min(1.0, phase * 2.5))))
    draw.text((W / 2, H / 2), str(number), font=number_fonts[size], fill="white", anchor="mm")
    draw.text((W / 2, H - 60), "Birthday countdown", font=small, fill=(255, 255, 255), anchor="mm")
    return frame


def greeting_frame(t):
    local = t - COUNT_FROM
    frame = greeting_bg.copy()
    draw = ImageDraw.Draw(frame)
    for x, y0, speed, size, color in confetti:
        y = y0 + speed * (local + 1.2)
        if 0 <= y <= H:
            draw.rectangle((x, y, x + size, y + size * 0.6), fill=color)
    scale = ease_out(min(1.0, local * 2))
    draw.text((W / 2, H / 2 - 40), "Happy Birthday,", font=big, fill="#5b1a3a", anchor="mm")
    draw.text((W / 2, H / 2 + 80), f"{NAME}!", font=font(int(60 + 70 * scale)), fill="#5b1a3a", anchor="mm")
    return frame


total_frames = FPS * (COUNT_FROM + GREETING_SECONDS)
encoder = subprocess.Popen(
    ["ffmpeg", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{W}x{H}",
     "-r", str(FPS), "-i", "-", "-c:v", "libx264", "-preset", "veryfast", "-crf", "21",
     "-pix_fmt", "yuv420p", "-movflags", "+faststart", OUT],
    stdin=subprocess.PIPE,
)
for index in range(total_frames):
    t = index / FPS
    image = countdown_frame(t) if t < COUNT_FROM else greeting_frame(t)
    encoder.stdin.write(image.tobytes())
encoder.stdin.close()
if encoder.wait() != 0:
    raise SystemExit("ffmpeg failed")
print(f"wrote {OUT}: {total_frames} frames at {FPS} fps = {total_frames / FPS:.1f} s")

# For people who cannot see or hear it: captions (WebVTT) and a description beside the video.
cues = ["WEBVTT", ""]
for second in range(COUNT_FROM):
    cues += [f"00:{second:02d}.000 --> 00:{second + 1:02d}.000", str(COUNT_FROM - second), ""]
end = COUNT_FROM + GREETING_SECONDS
cues += [f"00:{COUNT_FROM:02d}.000 --> 00:{end:02d}.000", f"Happy Birthday, {NAME}!", ""]
with open(OUT + ".vtt", "w") as captions:
    captions.write("\n".join(cues))
with open(OUT + ".alt.txt", "w") as description:
    description.write(f"A countdown from {COUNT_FROM} to 1 in big white numbers on changing colour gradients, "
                      f"then confetti falls around 'Happy Birthday, {NAME}!'.")
"""

TRAJECTORY = {
    "kind": "video",
    "title": "12-second birthday countdown",
    "brief": (
        "Make a 12-second birthday countdown video for my friend Maya: 1280x720 MP4, "
        "counting down from 10 to 1, one second per number, then a 'Happy Birthday, Maya!' greeting."
    ),
    "keywords": ["video", "countdown", "birthday", "mp4", "animation", "clip", "movie", "greeting"],
    "steps": [
        {
            "text": "I'll check the tools for drawing frames and encoding video first.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "ls -la /testbed/input; which ffmpeg; python3 -c 'import PIL; print(\"Pillow\", PIL.__version__)'; "
                        "fc-list | grep -i 'DejaVuSans-Bold' | head -1"
                    },
                }
            ],
        },
        {
            "text": (
                "ffmpeg and Pillow are here. Plan: draw each frame with Pillow (a gradient per number, a ring that "
                "empties each second, the number popping in), then confetti and the greeting for the last two "
                "seconds, and pipe raw frames into ffmpeg for an H.264 MP4."
            ),
            "calls": [
                {
                    "name": "str_replace_editor",
                    "arguments": {"command": "create", "path": "/testbed/work/make_video.py", "file_text": MAKE_VIDEO},
                }
            ],
        },
        {
            "text": "Rendering the video.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {"command": "mkdir -p /testbed/output && cd /testbed/work && python3 make_video.py"},
                }
            ],
        },
        {
            "text": "Checking duration, resolution and codec of the result.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "ffmpeg -hide_banner -i /testbed/output/birthday-countdown.mp4 2>&1 | grep -E 'Duration|Video:'; "
                        "ls -la /testbed/output"
                    },
                }
            ],
        },
        {
            "text": "The video is 12 s at 1280x720. Done.",
            "calls": [
                {
                    "name": "submit",
                    "arguments": {
                        "summary": (
                            "birthday-countdown.mp4: a 12-second 1280x720 H.264 video counting down from 10 to 1 "
                            "(one second per number, with a ring timer), then confetti and 'Happy Birthday, Maya!'."
                        )
                    },
                }
            ],
        },
    ],
}

FOLLOW_UPS = [
    {
        "instruction": "Make the birthday greeting at the end dark blue with gold letters.",
        "steps": [
            {
                "text": "Let me see what the first version left in /testbed.",
                "calls": [{"name": "execute_bash", "arguments": {"command": "ls -R /testbed"}}],
            },
            {
                "text": (
                    "make_video.py draws every frame. The greeting's background is a pink gradient; I'll make it a "
                    "dark blue one (lighter towards the bottom, so it still has depth) and add a gold colour for the text."
                ),
                "calls": [
                    {
                        "name": "str_replace_editor",
                        "arguments": {
                            "command": "str_replace",
                            "path": "/testbed/work/make_video.py",
                            "old_str": 'greeting_bg = gradient("#ff9a9e", "#fad0c4")\n',
                            "new_str": 'greeting_bg = gradient("#0c2461", "#1b4b9b")  # dark blue\nGOLD = "#ffd166"\n',
                        },
                    }
                ],
            },
            {
                "text": "Both lines of the greeting in gold.",
                "calls": [
                    {
                        "name": "str_replace_editor",
                        "arguments": {
                            "command": "str_replace",
                            "path": "/testbed/work/make_video.py",
                            "old_str": '    draw.text((W / 2, H / 2 - 40), "Happy Birthday,", font=big, fill="#5b1a3a", anchor="mm")\n'
                            '    draw.text((W / 2, H / 2 + 80), f"{NAME}!", font=font(int(60 + 70 * scale)), fill="#5b1a3a", anchor="mm")\n',
                            "new_str": '    draw.text((W / 2, H / 2 - 40), "Happy Birthday,", font=big, fill=GOLD, anchor="mm")\n'
                            '    draw.text((W / 2, H / 2 + 80), f"{NAME}!", font=font(int(60 + 70 * scale)), fill=GOLD, anchor="mm")\n',
                        },
                    }
                ],
            },
            {
                "text": "Rendering the video again.",
                "calls": [
                    {"name": "execute_bash", "arguments": {"command": "cd /testbed/work && python3 make_video.py"}}
                ],
            },
            {
                "text": "Checking the video and a frame of the new greeting.",
                "calls": [
                    {
                        "name": "execute_bash",
                        "arguments": {
                            "command": "cd /testbed/work && ffmpeg -hide_banner -i /testbed/output/birthday-countdown.mp4 2>&1 | grep -E 'Duration|Video:'; "
                            "ffmpeg -loglevel error -y -ss 11.5 -i /testbed/output/birthday-countdown.mp4 -frames:v 1 greeting.png && "
                            'python3 -c \'from PIL import Image; im = Image.open("greeting.png").convert("RGB"); print("corner", im.getpixel((4, 4)), "bottom", im.getpixel((4, 715)))\''
                        },
                    }
                ],
            },
            {
                "text": "The greeting is gold on dark blue; the countdown itself is unchanged.",
                "calls": [
                    {
                        "name": "submit",
                        "arguments": {
                            "summary": (
                                "birthday-countdown.mp4 is rendered again: the closing 'Happy Birthday, Maya!' is now "
                                "gold lettering on a dark blue gradient, with the confetti falling as before. The "
                                "countdown from 10 to 1 is unchanged, and the video is still 12 s at 1280x720."
                            )
                        },
                    }
                ],
            },
        ],
    }
]
