"""The Streamlit pages of the leaderboard (leaderboard/app.py routes to them)."""
