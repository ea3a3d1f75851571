"""Demo trajectory: a short illustrated PDF report with a chart (recorded model choices)."""
# ruff: noqa: E501 - recorded data: long lines are the commands and files the model wrote

SALES_CSV = """month,revenue_eur,customers,top_product
2025-01,18200,2140,sourdough loaf
2025-02,17650,2075,sourdough loaf
2025-03,20400,2390,hot cross bun
2025-04,21950,2520,hot cross bun
2025-05,23100,2660,strawberry tart
2025-06,24800,2810,strawberry tart
2025-07,22300,2580,iced coffee
2025-08,21200,2430,iced coffee
2025-09,24150,2750,apple galette
2025-10,25900,2940,cinnamon roll
2025-11,27400,3105,cinnamon roll
2025-12,31800,3560,stollen
"""

MAKE_REPORT = r"""# A two-page illustrated report on a year of sales, from /testbed/input/sales.csv.
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import cm
from reportlab.platypus import Image, PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

SOURCE = "/testbed/input/sales.csv"
CHART = "/testbed/output/revenue-chart.png"
PDF = "/testbed/output/bakery-year-report.pdf"

with open(SOURCE, newline="") as handle:
    rows = list(csv.DictReader(handle))
months = [row["month"] for row in rows]
revenue = [float(row["revenue_eur"]) for row in rows]
customers = [int(row["customers"]) for row in rows]
basket = [r / c for r, c in zip(revenue, customers)]
total = sum(revenue)
best = max(range(len(rows)), key=lambda i: revenue[i])
worst = min(range(len(rows)), key=lambda i: revenue[i])
growth = (revenue[-1] - revenue[0]) / revenue[0] * 100
first_half, second_half = sum(revenue[:6]), sum(revenue[6:])

# The chart: revenue bars with the customer count as a line on a second axis.
labels = [m[5:] for m in months]
fig, ax = plt.subplots(figsize=(8, 4), dpi=150)
bars = ax.bar(labels, [r / 1000 for r in revenue], color="#c8875b", label="Revenue (k EUR)")
bars[best].set_color("#8c4a2f")
ax.set_ylabel("Revenue (thousand EUR)")
ax.set_xlabel("Month of 2025")
ax.spines[["top"]].set_visible(False)
line_ax = ax.twinx()
line_ax.plot(labels, customers, color="#2f5d8c", marker="o", linewidth=2, label="Customers")
line_ax.set_ylabel("Customers")
line_ax.spines[["top"]].set_visible(False)
ax.set_title("Monthly revenue and customers", loc="left", fontweight="bold")
handles = [bars, line_ax.get_lines()[0]]
ax.legend(handles, [h.get_label() for h in handles], loc="upper left", frameon=False)
fig.tight_layout()
fig.savefig(CHART)

styles = getSampleStyleSheet()
body = ParagraphStyle("body", parent=styles["BodyText"], fontSize=10.5, leading=15)
doc = SimpleDocTemplate(PDF, pagesize=A4, leftMargin=2 * cm, rightMargin=2 * cm, topMargin=2 * cm, bottomMargin=2 * cm,
                        title="Crumb & Co. - 2025 in review", author="Atelier")
story = [
    Paragraph("Crumb &amp; Co. &mdash; 2025 in review", styles["Title"]),
    Paragraph("A short report on twelve months of sales", styles["Italic"]),
    Spacer(1, 0.5 * cm),
    Paragraph(
        f"The bakery took <b>{total:,.0f} EUR</b> in 2025. Revenue grew <b>{growth:.0f}%</b> from January to "
        f"December, and the second half of the year brought {second_half / first_half * 100 - 100:.0f}% more than "
        f"the first. The best month was <b>{months[best]}</b> ({revenue[best]:,.0f} EUR, led by "
        f"{rows[best]['top_product']}); the quietest was {months[worst]} ({revenue[worst]:,.0f} EUR).",
        body,
    ),
    Spacer(1, 0.4 * cm),
    Image(CHART, width=16 * cm, height=8 * cm),
    Spacer(1, 0.4 * cm),
    Paragraph("What stands out", styles["Heading2"]),
    Paragraph(f"&bull; The average basket rose from {basket[0]:.2f} EUR to {basket[-1]:.2f} EUR.", body),
    Paragraph("&bull; Summer dipped after June: iced drinks sold, but fewer people came in.", body),
    Paragraph("&bull; Seasonal bakes (hot cross buns, stollen) led the strongest months.", body),
    PageBreak(),
    Paragraph("Month by month", styles["Heading2"]),
]
table_rows = [["Month", "Revenue (EUR)", "Customers", "Avg. basket", "Best seller"]]
for row, r, c, b in zip(rows, revenue, customers, basket):
    table_rows.append([row["month"], f"{r:,.0f}", f"{c:,}", f"{b:.2f}", row["top_product"]])
table = Table(table_rows, repeatRows=1, colWidths=[2.6 * cm, 3.2 * cm, 2.6 * cm, 2.6 * cm, 4 * cm])
table.setStyle(TableStyle([
    ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#8c4a2f")),
    ("TEXTCOLOR", (0, 0), (-1, 0), colors.white),
    ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
    ("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, colors.HexColor("#f6ede6")]),
    ("ALIGN", (1, 1), (3, -1), "RIGHT"),
    ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#d9c4b5")),
]))
story += [
    table,
    Spacer(1, 0.6 * cm),
    Paragraph("About the data", styles["Heading2"]),
    Paragraph(f"Figures come from {SOURCE.rsplit('/', 1)[-1]} (one row per month). The average basket is revenue "
              "divided by customers. Chart and tables were made with matplotlib and ReportLab.", body),
]
doc.build(story)
print(f"wrote {PDF} and {CHART}")
"""

TRAJECTORY = {
    "kind": "report",
    "title": "Illustrated sales report (PDF)",
    "brief": (
        "Write a short illustrated PDF report on my bakery's 2025 sales (sales.csv attached): "
        "the key numbers, a chart of revenue and customers per month, and a month-by-month table."
    ),
    "keywords": ["report", "pdf", "chart", "sales", "csv", "document", "analysis", "summary", "data", "graph", "plot"],
    "inputs": {"sales.csv": SALES_CSV},
    "steps": [
        {
            "text": "First I'll look at the attached data.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "ls -la /testbed/input; head -n 5 /testbed/input/sales.csv 2>/dev/null || echo 'no sales.csv attached'"
                    },
                }
            ],
        },
        {
            "text": "If no data was attached, I'll use the sample year of sales so the report can still be made.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "mkdir -p /testbed/input && if [ -f /testbed/input/sales.csv ]; then echo 'using the attached sales.csv'; "
                        "else cat > /testbed/input/sales.csv <<'CSV'\n"
                        + SALES_CSV
                        + "CSV\necho 'wrote sample sales.csv'; fi; "
                        'wc -l /testbed/input/sales.csv; python3 -c \'import reportlab, matplotlib; print("reportlab", reportlab.Version, "matplotlib", matplotlib.__version__)\''
                    },
                }
            ],
        },
        {
            "text": (
                "Twelve months of revenue, customers and best sellers. I'll chart revenue as bars with customers as a "
                "line, then lay out a two-page A4 report with ReportLab: summary, chart, highlights, then a table."
            ),
            "calls": [
                {
                    "name": "str_replace_editor",
                    "arguments": {
                        "command": "create",
                        "path": "/testbed/work/make_report.py",
                        "file_text": MAKE_REPORT,
                    },
                }
            ],
        },
        {
            "text": "Building the report.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {"command": "mkdir -p /testbed/output && cd /testbed/work && python3 make_report.py"},
                }
            ],
        },
        {
            "text": "Checking the PDF.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": "pdfinfo /testbed/output/bakery-year-report.pdf | grep -E 'Title|Pages|Page size'; "
                        "pdftotext -l 1 /testbed/output/bakery-year-report.pdf - | head -n 8; ls -la /testbed/output"
                    },
                }
            ],
        },
        {
            "text": "The report has two pages with the chart and the table.",
            "calls": [
                {
                    "name": "submit",
                    "arguments": {
                        "summary": (
                            "bakery-year-report.pdf: a two-page A4 report on 2025 sales: headline figures, a chart of "
                            "monthly revenue and customers (also saved as revenue-chart.png), highlights, and a "
                            "month-by-month table with average basket and best seller."
                        )
                    },
                }
            ],
        },
    ],
}

PRODUCT_CHART_CODE = r"""fig.savefig(CHART)

# Best sellers: how many months each product led, and the revenue of those months.
led = {}
for row, r in zip(rows, revenue):
    months_led, takings = led.get(row["top_product"], (0, 0.0))
    led[row["top_product"]] = (months_led + 1, takings + r)
ranked = sorted(led.items(), key=lambda item: item[1][1])  # smallest first: barh draws from the bottom up
fig, ax = plt.subplots(figsize=(8, 3.6), dpi=150)
ax.barh([name for name, _ in ranked], [t / 1000 for _, (_, t) in ranked], color="#c8875b")
for i, (_, (n, t)) in enumerate(ranked):
    ax.text(t / 1000 + 0.6, i, f"{n} month{'s' if n > 1 else ''}", va="center", fontsize=9)
ax.set_xlim(0, max(t for _, (_, t) in ranked) / 1000 * 1.2)
ax.set_xlabel("Revenue of the months it led (thousand EUR)")
ax.set_title("Best sellers", loc="left", fontweight="bold")
ax.spines[["top", "right"]].set_visible(False)
fig.tight_layout()
fig.savefig(PRODUCT_CHART)
top_name, (top_months, top_takings) = ranked[-1]
"""

BEST_SELLERS_SECTION = """story += [
    table,
    Spacer(1, 0.6 * cm),
    Paragraph("Best sellers", styles["Heading2"]),
    Paragraph(
        f"Over the year, {len(ranked)} products took turns as the month's best seller. The {top_name} led the "
        f"months worth the most: {top_months} months, {top_takings:,.0f} EUR together. Seasonal bakes had their "
        "months too (hot cross buns in spring, stollen in December), and iced coffee carried the summer.",
        body,
    ),
    Spacer(1, 0.2 * cm),
    Image(PRODUCT_CHART, width=16 * cm, height=7.2 * cm),
    Spacer(1, 0.4 * cm),
    Paragraph("About the data", styles["Heading2"]),
"""


def _edit(text: str, old: str, new: str) -> dict[str, object]:
    return {
        "text": text,
        "calls": [
            {
                "name": "str_replace_editor",
                "arguments": {
                    "command": "str_replace",
                    "path": "/testbed/work/make_report.py",
                    "old_str": old,
                    "new_str": new,
                },
            }
        ],
    }


FOLLOW_UPS = [
    {
        "instruction": "Add a section on the best sellers, with a chart.",
        "steps": [
            {
                "text": "Let me see what the first version left in /testbed.",
                "calls": [{"name": "execute_bash", "arguments": {"command": "ls -R /testbed"}}],
            },
            {
                "text": "make_report.py builds the PDF from sales.csv, which names each month's best seller. Let me see how often each one led.",
                "calls": [
                    {
                        "name": "execute_bash",
                        "arguments": {
                            "command": "cut -d, -f4 /testbed/input/sales.csv | tail -n +2 | sort | uniq -c | sort -rn"
                        },
                    }
                ],
            },
            _edit(
                "Seven products, most leading for two months. The new chart gets a file of its own next to the first one.",
                'PDF = "/testbed/output/bakery-year-report.pdf"\n',
                'PDF = "/testbed/output/bakery-year-report.pdf"\nPRODUCT_CHART = "/testbed/output/best-sellers-chart.png"\n',
            ),
            _edit(
                "The chart: one bar per product, as long as the revenue of the months it led, labelled with how "
                "many months that was.",
                "fig.savefig(CHART)\n",
                PRODUCT_CHART_CODE,
            ),
            _edit(
                "The section goes after the month-by-month table, before the note about the data.",
                'story += [\n    table,\n    Spacer(1, 0.6 * cm),\n    Paragraph("About the data", styles["Heading2"]),\n',
                BEST_SELLERS_SECTION,
            ),
            _edit(
                "The note about the data now mentions two charts.",
                "Chart and tables were made with matplotlib and ReportLab.",
                "Charts and the table were made with matplotlib and ReportLab.",
            ),
            {
                "text": "Building the report again.",
                "calls": [
                    {"name": "execute_bash", "arguments": {"command": "cd /testbed/work && python3 make_report.py"}}
                ],
            },
            {
                "text": "Checking the new section in the PDF.",
                "calls": [
                    {
                        "name": "execute_bash",
                        "arguments": {
                            "command": "pdfinfo /testbed/output/bakery-year-report.pdf | grep -E 'Pages'; "
                            "pdftotext /testbed/output/bakery-year-report.pdf - | grep -A 4 'Best sellers'; "
                            "pdfimages -list /testbed/output/bakery-year-report.pdf; ls -la /testbed/output"
                        },
                    }
                ],
            },
            {
                "text": "The report has its new section.",
                "calls": [
                    {
                        "name": "submit",
                        "arguments": {
                            "summary": (
                                "bakery-year-report.pdf has a new 'Best sellers' section after the month-by-month "
                                "table: a short text on which products led which months, and a chart of the seven "
                                "best sellers by the revenue of the months they led (also saved as "
                                "best-sellers-chart.png). The rest of the report is as before."
                            )
                        },
                    }
                ],
            },
        ],
    }
]
